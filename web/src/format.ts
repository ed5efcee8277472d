import type { Decimal } from './api';

/*
 * Money in the project's currency with that currency's minor unit (Intl knows them: 2 for USD, 0 for
 * JPY), hours with two decimals. Figures arrive rounded by the service; this only formats them.
 */
const moneyFormats = new Map<string, Intl.NumberFormat>();

export function formatMoney(value: Decimal, currency: string): string {
  let format = moneyFormats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency });
    moneyFormats.set(currency, format);
  }
  return format.format(String(value) as Intl.StringNumericLiteral);
}

const hoursFormat = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
export function formatHours(value: Decimal): string {
  return hoursFormat.format(String(value) as Intl.StringNumericLiteral);
}

/** For sorting and the chart only: never for sums. */
export function toNumber(value: Decimal): number {
  return typeof value === 'number' ? value : Number(value);
}

export function isNegative(value: Decimal): boolean {
  return String(value).trim().startsWith('-') && toNumber(value) !== 0;
}
