import type { Decimal } from './api';

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
