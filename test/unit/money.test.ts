import {
  Decimal,
  decimalPlaces,
  hoursFromSeconds,
  hoursOfHundredths,
  hundredthsOfHour,
  costInMinorUnits,
  isSupportedCurrency,
  minorUnit,
  roundHours,
  roundMoney,
  secondsFromHours,
  splitHundredths,
  decimalOfTenThousandths,
  tenThousandthsOf,
  tenThousandthsOfHundredths,
  tenThousandthsOfMinorUnits,
  tenThousandthsText,
} from '../../src/finance/rules/money';

const d = (v: string | number) => new Decimal(v);
/** Shares in hundredths of an hour, as hours with two decimals. */
const texts = (values: bigint[]) => values.map((v) => hoursOfHundredths(v).toFixed(2));

describe('splitHundredths (largest remainder, in hundredths)', () => {
  it('gives the left-over hundredth to the first member: 10 h over 3', () => {
    expect(texts(splitHundredths(d(10), 3))).toEqual(['3.34', '3.33', '3.33']);
  });
  it('spreads several left-over hundredths: 0.05 h over 3', () => {
    expect(texts(splitHundredths(d('0.05'), 3))).toEqual(['0.02', '0.02', '0.01']);
  });
  it('can leave a member with 0: 0.01 h over 2', () => {
    expect(texts(splitHundredths(d('0.01'), 2))).toEqual(['0.01', '0.00']);
  });
  it('splits evenly when it can: 7 h over 7', () => {
    expect(texts(splitHundredths(d(7), 7))).toEqual(Array(7).fill('1.00'));
  });
  it('always adds up to the estimate: 100.01 h over 6', () => {
    const shares = splitHundredths(d('100.01'), 6);
    expect(texts(shares)).toEqual(['16.67', '16.67', '16.67', '16.67', '16.67', '16.66']);
    expect(hoursOfHundredths(shares.reduce((a, b) => a + b, 0n)).toFixed(2)).toBe('100.01');
  });
  it('has no shares without assignees', () => {
    expect(splitHundredths(d(10), 0)).toEqual([]);
  });
  it('refuses an estimate finer than hundredths', () => {
    expect(() => splitHundredths(d('1.005'), 2)).toThrow(RangeError);
  });
});

describe('roundMoney (half away from zero, at the minor unit)', () => {
  it('rounds 1.005 USD up to 1.01, where floating point gives 1', () => {
    expect(Math.round(1.005 * 100) / 100).toBe(1);
    expect(roundMoney(d('1.005'), 'USD').toFixed()).toBe('1.01');
  });
  it('rounds negative halves away from zero', () => {
    expect(roundMoney(d('-1.005'), 'USD').toFixed()).toBe('-1.01');
    expect(roundMoney(d('-1.004'), 'EUR').toFixed()).toBe('-1');
  });
  it('uses 0 decimals for JPY', () => {
    expect(roundMoney(d('11132.22'), 'JPY').toFixed()).toBe('11132');
    expect(roundMoney(d('1234.5'), 'JPY').toFixed()).toBe('1235');
  });
  it('uses 3 decimals for KWD', () => {
    expect(roundMoney(d('41.10885'), 'KWD').toFixed()).toBe('41.109');
    expect(roundMoney(d('1.0005'), 'KWD').toFixed()).toBe('1.001');
  });
  it('keeps every digit of large values', () => {
    expect(roundMoney(d('999999999.995'), 'USD').toFixed()).toBe('1000000000');
    expect(roundMoney(d('1000000').times(d('999999.99')), 'USD').toFixed()).toBe('999999990000');
    expect(roundMoney(d('123456789012.345'), 'USD').toFixed()).toBe('123456789012.35');
  });
});

describe('hours', () => {
  it('converts seconds to hours rounded to 2 decimals, half away from zero', () => {
    expect(hoursFromSeconds(5400).toFixed()).toBe('1.5');
    expect(hoursFromSeconds(1234).toFixed()).toBe('0.34'); // 0.342777...
    // Exactly half a hundredth (18 s) rounds up; just under it rounds down.
    expect(hoursFromSeconds(18).toFixed()).toBe('0.01');
    expect(hoursFromSeconds(17).toFixed()).toBe('0');
    expect(hoursFromSeconds(3618).toFixed()).toBe('1.01');
    expect(hoursFromSeconds(0).toFixed()).toBe('0');
    expect(hoursFromSeconds(18).toFixed()).toBe('0.01'); // exactly 0.005
    expect(hoursFromSeconds(17).toFixed()).toBe('0'); // 0.004722...
    expect(hoursFromSeconds(4000).toFixed()).toBe('1.11');
  });
  it('converts hours to whole seconds exactly, where floating point misrounds halves', () => {
    expect(Math.round(0.14125 * 3600)).toBe(508); // 508.49999999999994 in binary floating point
    expect(secondsFromHours(0.14125)).toBe(509); // exactly 508.5 s
    expect(secondsFromHours(0.25375)).toBe(914);
    expect(secondsFromHours(1.25)).toBe(4500);
    expect(secondsFromHours(0.0001)).toBe(0); // 0.36 s
  });
  it('rounds hours half away from zero', () => {
    expect(roundHours(d('2.345')).toFixed()).toBe('2.35');
  });
});

describe('costInMinorUnits (rule 4 in integers)', () => {
  it('costs hundredths of an hour at a rate, rounded half away from zero to the minor unit', () => {
    // 0.34 h x 97.25 = 33.065 -> 33.07 USD (3307 cents); 1.5 h x 99.999 = 149.9985 -> 150.00
    expect(costInMinorUnits(34n, d('97.25'), 'USD')).toBe(3307n);
    expect(costInMinorUnits(150n, d('99.999'), 'USD')).toBe(15000n);
    // 0.5 h x 1001 JPY = 500.5 -> 501 yen; 0.01 h x 0.1 = 0.001 USD -> 0
    expect(costInMinorUnits(50n, d('1001'), 'JPY')).toBe(501n);
    expect(costInMinorUnits(1n, d('0.1'), 'USD')).toBe(0n);
    // KWD has 3 decimals: 1.01 h x 2.5 = 2.525 exactly, 2525 fils, nothing rounded; a whole rate scales up
    expect(costInMinorUnits(101n, d('2.5'), 'KWD')).toBe(2525n);
    expect(costInMinorUnits(101n, d('2'), 'KWD')).toBe(2020n);
    // half away from zero below zero too: -0.5 h x 0.01 = -0.005 -> -0.01
    expect(costInMinorUnits(-50n, d('0.01'), 'USD')).toBe(-1n);
    // every digit of the rate counts, past any decimal precision: 1 h at a 66-digit rate
    const long = `${'9'.repeat(63)}.125`;
    expect(costInMinorUnits(100n, d(long), 'USD')).toBe(BigInt(`${'9'.repeat(63)}13`));
  });

  it('equals the decimal computation (hours rounded, times the rate, rounded) over random lines', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 3000; i++) {
      const seconds = Math.floor(random() * 10 ** Math.floor(random() * 10));
      const rate = d(Math.floor(random() * 10 ** Math.floor(random() * 9))).div(10 ** Math.floor(random() * 5));
      const currency = ['USD', 'JPY', 'KWD', 'CLF'][i % 4] as string;
      const hours = d(seconds).div(3600).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
      const expected = roundMoney(hours.times(rate), currency).times(d(10).pow(minorUnit(currency)));
      expect(costInMinorUnits(hundredthsOfHour(seconds), rate, currency).toString()).toBe(expected.toFixed());
    }
  });
});

describe('currencies', () => {
  it('knows minor units of the common and the odd currencies', () => {
    expect(minorUnit('USD')).toBe(2);
    expect(minorUnit('EUR')).toBe(2);
    expect(minorUnit('JPY')).toBe(0);
    expect(minorUnit('KWD')).toBe(3);
    expect(minorUnit('CLF')).toBe(4);
  });
  it('accepts ISO 4217 codes and refuses others', () => {
    expect(isSupportedCurrency('USD')).toBe(true);
    expect(isSupportedCurrency('KWD')).toBe(true);
    expect(isSupportedCurrency('usd')).toBe(false);
    expect(isSupportedCurrency('ABC')).toBe(false);
    expect(isSupportedCurrency('XAU')).toBe(false);
    // ISO 4217's funds codes, which Node's ICU does not list: Chile's Unidad de Fomento (4 decimals),
    // Uruguay's indexed unit (0) and wage index unit (4), the others 2.
    const funds = ['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI', 'UYW'];
    expect(funds.filter(isSupportedCurrency)).toEqual(funds);
    expect(funds.map(minorUnit)).toEqual([2, 2, 2, 4, 2, 2, 2, 0, 4]);
  });
  it('counts the decimals of a JSON number exactly', () => {
    expect(decimalPlaces(0.1)).toBe(1);
    expect(decimalPlaces(12.345)).toBe(3);
    expect(decimalPlaces(100)).toBe(0);
    expect(decimalPlaces(1e-7)).toBe(7);
  });
});

describe('hoursFromSeconds in integers', () => {
  it('equals seconds / 3600 in decimals rounded half away from zero, for every second of two days and large totals', () => {
    const byDecimals = (seconds: number) => new Decimal(seconds).div(3600).toDecimalPlaces(2, Decimal.ROUND_HALF_UP).toFixed();
    for (let seconds = 0; seconds <= 2 * 86_400; seconds++) {
      if (hoursFromSeconds(seconds).toFixed() !== byDecimals(seconds)) throw new Error(`differs at ${seconds} s`);
    }
    for (const seconds of [2 ** 40 + 17, 2 ** 40 + 18, 987_654_321_098, 2 ** 50 - 1, 2 ** 50, 2 ** 52]) {
      expect(hoursFromSeconds(seconds).toFixed()).toBe(byDecimals(seconds));
    }
  });
});

describe('figures in whole ten-thousandths (a preview adds thousands of tasks without a decimal each)', () => {
  it('reads numeric text and decimals exactly, with up to 4 decimals', () => {
    expect(tenThousandthsOf('0')).toBe(0n);
    expect(tenThousandthsOf('12.5')).toBe(125000n);
    expect(tenThousandthsOf('1234567890123456789.0001')).toBe(12345678901234567890001n);
    expect(tenThousandthsOf('-0.25')).toBe(-2500n);
    expect(tenThousandthsOf(new Decimal('100.125'))).toBe(1001250n);
    expect(tenThousandthsOf(new Decimal('1e21'))).toBe(10n ** 25n);
  });

  it('refuses what is not such a figure rather than round it', () => {
    expect(() => tenThousandthsOf('0.00001')).toThrow(RangeError);
    expect(() => tenThousandthsOf(new Decimal('1.23456'))).toThrow(RangeError);
    expect(() => tenThousandthsOf('1e5')).toThrow(RangeError);
    expect(() => tenThousandthsOf('')).toThrow(RangeError);
  });

  it('writes them back as the shortest exact decimal text', () => {
    expect([0n, 125000n, 1001250n, -2500n, 1n, 10n ** 25n].map(tenThousandthsText)).toEqual(['0', '12.5', '100.125', '-0.25', '0.0001', '1000000000000000000000']);
    expect(decimalOfTenThousandths(1001250n).toFixed()).toBe('100.125');
  });

  it('takes hundredths of an hour and minor units of each currency to the same scale', () => {
    expect(tenThousandthsOfHundredths(975n)).toBe(97500n); // 9.75 h
    expect(tenThousandthsOfMinorUnits(9725n, 'USD')).toBe(972500n); // 97.25
    expect(tenThousandthsOfMinorUnits(9725n, 'JPY')).toBe(97250000n); // 9,725
    expect(tenThousandthsOfMinorUnits(9725n, 'KWD')).toBe(97250n); // 9.725
    expect(tenThousandthsOfMinorUnits(9725n, 'CLF')).toBe(9725n); // 0.9725
  });
});
