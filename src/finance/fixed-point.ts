/*
 * Exact sums of the stored figures, fast enough for a 10,000-task project export: every figure column
 * has at most 4 decimals (hours numeric(_, 2), money numeric(_, 4)), so each is held as a BigInt
 * count of ten-thousandths. Parsing and formatting are exact; there is no rounding here (the values
 * are already rounded by the calculator, and sums of rounded values are what the contract adds up).
 */
export type Fixed = bigint;

const SCALE = 4;
const ZEROS = '0'.repeat(SCALE);
const NUMERIC = /^-?[0-9]+(?:\.[0-9]{1,4})?$/;

/** Reads a numeric column's text ("12.5", "-3", "0.0400"). */
export function parseFixed(text: string): Fixed {
  if (!NUMERIC.test(text)) throw new RangeError(`Not a numeric with at most ${SCALE} decimals: ${text}`);
  const point = text.indexOf('.');
  if (point < 0) return BigInt(text + ZEROS);
  const fraction = text.slice(point + 1);
  return BigInt(text.slice(0, point) + fraction + ZEROS.slice(fraction.length));
}

/** The shortest exact decimal text ("12.5", "-3", "0.04"), as a numeric or a Decimal would print it. */
export function formatFixed(value: Fixed): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(SCALE + 1, '0');
  const whole = digits.slice(0, -SCALE);
  const fraction = digits.slice(-SCALE).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
