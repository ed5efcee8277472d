import DecimalJs from 'decimal.js';

/*
 * The only place that knows currencies' minor units and how to round. Everything is exact decimal
 * arithmetic; ROUND_HALF_UP in decimal.js rounds half away from zero, as the contract requires.
 */
export const Decimal = DecimalJs.clone({
  precision: 60,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -40,
  toExpPos: 60,
});
export type Decimal = DecimalJs;

export const ZERO: Decimal = new Decimal(0);

export const HOURS_DECIMALS = 2;

/** ISO 4217 currencies whose minor unit is not 2 digits. */
const MINOR_UNIT_EXCEPTIONS: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0,
  VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

/** Codes that are not money (precious metals, testing, "no currency"). */
const NON_MONEY_CODES = new Set(['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX']);

/**
 * ISO 4217's funds codes, which Node's ICU formats (with their minor units) but does not list among its
 * currencies: units a finance team may keep accounts in, such as Chile's Unidad de Fomento (CLF).
 */
const FUNDS_CODES = ['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI', 'UYW'];

const knownCurrencies = new Set([...Intl.supportedValuesOf('currency'), ...FUNDS_CODES]);

export function isSupportedCurrency(code: string): boolean {
  return /^[A-Z]{3}$/.test(code) && knownCurrencies.has(code) && !NON_MONEY_CODES.has(code);
}

/** Digits after the decimal point of the currency's minor unit (2 for USD, 0 for JPY, 3 for KWD). */
export function minorUnit(currency: string): number {
  return MINOR_UNIT_EXCEPTIONS[currency] ?? 2;
}

export function roundMoney(amount: Decimal, currency: string): Decimal {
  return amount.toDecimalPlaces(minorUnit(currency), Decimal.ROUND_HALF_UP);
}

export function roundHours(hours: Decimal): Decimal {
  return hours.toDecimalPlaces(HOURS_DECIMALS, Decimal.ROUND_HALF_UP);
}

/**
 * Whole seconds as hundredths of an hour, half away from zero (rule 4's hours, in integers). For whole
 * non-negative seconds (every logged total) seconds / 36 rounded half up is floor((2 x seconds + 36) /
 * 72), exact below 2^53; anything else goes through decimals.
 */
export function hundredthsOfHour(seconds: number): bigint {
  if (Number.isSafeInteger(seconds) && seconds >= 0 && seconds < 2 ** 50) return BigInt(Math.floor((2 * seconds + 36) / 72));
  return BigInt(new Decimal(seconds).div(36).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toFixed(0));
}

/**
 * A rate per day as the rate per hour shown beside it (docs/finance-rules.md R21): divided by the hours
 * of a day and rounded to 4 decimals, for display only (never costed).
 */
export function hourlyOfDayRate(rate: Decimal, perDay: Decimal): Decimal {
  return rate.div(perDay).toDecimalPlaces(4, Decimal.ROUND_HALF_UP);
}

/** Whole seconds as hours rounded to 2 decimals, half away from zero. */
export function hoursFromSeconds(seconds: number): Decimal {
  return hoursOfHundredths(hundredthsOfHour(seconds));
}

/** A whole number of 10^-scale as a decimal: (9725, 2) is 97.25. */
function fromScaled(units: bigint, scale: number): Decimal {
  return new Decimal(`${units}e-${scale}`);
}

/** Hundredths of an hour as hours: 9725 is 97.25 h. */
export function hoursOfHundredths(hundredths: bigint): Decimal {
  return fromScaled(hundredths, HOURS_DECIMALS);
}

/** A whole number of the currency's minor units as an amount: 9725 is 97.25 USD, 9,725 JPY, 9.725 KWD. */
export function amountOfMinorUnits(units: bigint, currency: string): Decimal {
  return fromScaled(units, minorUnit(currency));
}

/** Decimals as whole numbers of 10^-(their decimal places), once per decimal (they are immutable). */
const scaledOf = new WeakMap<Decimal, { units: bigint; scale: number; scaleFactor: bigint }>();

function scaled(value: Decimal): { units: bigint; scale: number; scaleFactor: bigint } {
  let found = scaledOf.get(value);
  if (!found) {
    // Its digits without the point (toFixed() writes every one, never an exponent): no rounding at any precision.
    const scale = value.decimalPlaces();
    found = { units: BigInt(value.toFixed().replace('.', '')), scale, scaleFactor: 10n ** BigInt(scale) };
    scaledOf.set(value, found);
  }
  return found;
}

/** n / d rounded half away from zero, for d > 0. */
function divideHalfUp(n: bigint, d: bigint): bigint {
  const quotient = n / d;
  const remainder = n % d;
  if (2n * (remainder < 0n ? -remainder : remainder) < d) return quotient;
  return n < 0n ? quotient - 1n : quotient + 1n;
}

/**
 * What hours cost (an estimate's share, rule 3; a cost line, section 3b rule 4): `hundredths`
 * hundredths of an hour (the hours, already rounded) times `rate`, rounded half away from zero to the
 * currency's minor unit, as a whole number of minor units. Integers throughout, so exactly
 * roundMoney(hours x rate), without a decimal per step: a preview costs hundreds of thousands of lines.
 */
export function costInMinorUnits(hundredths: bigint, rate: Decimal, currency: string, perDay: Decimal | null = null): bigint {
  const { units, scale } = scaled(rate);
  const product = hundredths * units;
  if (perDay !== null) {
    // A rate per day of `perDay` hours (docs/finance-rules.md R21): hours x rate / hours_per_day, one rounding.
    const day = scaled(perDay);
    return divideHalfUp(product * day.scaleFactor * 10n ** BigInt(minorUnit(currency)), 10n ** BigInt(HOURS_DECIMALS + scale) * day.units);
  }
  const dropped = HOURS_DECIMALS + scale - minorUnit(currency);
  return dropped <= 0 ? product * 10n ** BigInt(-dropped) : divideHalfUp(product, 10n ** BigInt(dropped));
}

/**
 * A task's own figures as whole ten-thousandths (hours and money alike): every one is exactly such a
 * number, since the stored figures have at most 4 decimals (numeric(_, 4) costs, numeric(_, 2) hours)
 * and so do computed ones (hours in hundredths, money in minor units of at most 4 digits, CLF and
 * UYW). Thousands of tasks' figures added and compared as bigints, without a decimal each (a preview).
 */
export const FIGURE_DECIMALS = 4;

/** A figure (a numeric column's text, or a decimal) in whole ten-thousandths; a RangeError if it has more decimals. */
export function tenThousandthsOf(value: string | Decimal): bigint {
  const text = typeof value === 'string' ? value : value.toFixed();
  const point = text.indexOf('.');
  const decimals = point < 0 ? 0 : text.length - point - 1;
  if (decimals > FIGURE_DECIMALS || !/^-?\d+(\.\d+)?$/.test(text)) throw new RangeError(`Not a figure of at most ${FIGURE_DECIMALS} decimals: ${text}`);
  const digits = point < 0 ? text : text.slice(0, point) + text.slice(point + 1);
  return BigInt(digits + '0'.repeat(FIGURE_DECIMALS - decimals));
}

const FIGURE_UNIT = 10n ** BigInt(FIGURE_DECIMALS);

/** Whole ten-thousandths as exact decimal text, without trailing zeros (a JSON number literal). */
export function tenThousandthsText(units: bigint): string {
  const negative = units < 0n;
  const magnitude = negative ? -units : units;
  const whole = magnitude / FIGURE_UNIT;
  const fraction = (magnitude % FIGURE_UNIT).toString().padStart(FIGURE_DECIMALS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Whole ten-thousandths as a decimal. */
export function decimalOfTenThousandths(units: bigint): Decimal {
  return fromScaled(units, FIGURE_DECIMALS);
}

/** Hundredths of an hour in whole ten-thousandths (of an hour). */
export function tenThousandthsOfHundredths(hundredths: bigint): bigint {
  return hundredths * 100n;
}

/** Whole minor units of the currency in whole ten-thousandths (of its main unit). */
export function tenThousandthsOfMinorUnits(units: bigint, currency: string): bigint {
  return units * 10n ** BigInt(FIGURE_DECIMALS - minorUnit(currency));
}

/** Whole seconds in `hours` (a JSON number), half away from zero: 0.14125 h is 508.5 s, so 509. */
export function secondsFromHours(hours: number): number {
  return new Decimal(hours).times(3600).toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber();
}

/** Parses a numeric column or a validated input; never goes through binary floating point for text. */
export function toDecimal(value: string | number | Decimal): Decimal {
  return new Decimal(value);
}

/** Digits after the decimal point needed to write the number exactly (0.1 -> 1, 1e-7 -> 7). */
export function decimalPlaces(value: number | string): number {
  return new Decimal(value).decimalPlaces();
}

export function sum(values: Iterable<Decimal>): Decimal {
  let total = ZERO;
  for (const value of values) total = total.plus(value);
  return total;
}

/**
 * Splits `total` hours into `count` shares in hundredths of an hour by the largest-remainder method.
 * With equal quotas every remainder is equal, so the left-over hundredths go to the first shares.
 */
export function splitHundredths(total: Decimal, count: number): bigint[] {
  if (count <= 0) return [];
  const hundredths = total.times(100);
  if (!hundredths.isInteger()) throw new RangeError(`Hours to split must have at most 2 decimals: ${total}`);
  const units = BigInt(hundredths.toFixed(0));
  const base = units / BigInt(count);
  const leftOver = units - base * BigInt(count);
  return Array.from({ length: count }, (_, index) => (BigInt(index) < leftOver ? base + 1n : base));
}
