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

/** A decimal's text as an integer and its number of decimals: "-12.5" is (-125n, 1). */
function scaled(value: Decimal): { units: bigint; decimals: number } | null {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(value).trim());
  if (!match) return null;
  const fraction = match[3] ?? '';
  const units = BigInt(`${match[2] ?? '0'}${fraction}`);
  return { units: match[1] ? -units : units, decimals: fraction.length };
}

/**
 * part / whole as a percentage with one decimal ("12.5%"), computed exactly from the decimals' text
 * (rounded half away from zero), never through binary floating point; null when whole is 0 or unreadable.
 */
export function ratioPercent(part: Decimal, whole: Decimal): string | null {
  const a = scaled(part);
  const b = scaled(whole);
  if (!a || !b || b.units === 0n) return null;
  // (a / 10^da) / (b / 10^db) x 1000 = a x 10^db x 1000 / (b x 10^da): tenths of a percent.
  let numerator = a.units * 10n ** BigInt(b.decimals) * 1000n;
  let denominator = b.units * 10n ** BigInt(a.decimals);
  if (denominator < 0n) {
    numerator = -numerator;
    denominator = -denominator;
  }
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const tenths = (magnitude * 2n + denominator) / (denominator * 2n);
  if (tenths === 0n) return '0.0%';
  return `${negative ? '-' : ''}${tenths / 10n}.${tenths % 10n}%`;
}
