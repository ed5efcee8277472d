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

const timeFormat = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short' });
/** A moment the service stamped (ISO 8601), in the browser's time zone. */
export function formatTime(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : timeFormat.format(at);
}

const percentFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
/** A percentage the service computed (rounded to 2 decimals there), as text: "85.5%". */
export function formatPercent(value: Decimal): string {
  return `${percentFormat.format(String(value) as Intl.StringNumericLiteral)}%`;
}

