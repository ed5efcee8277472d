import fc from 'fast-check';
import { formatFixed, parseFixed } from '../../src/finance/fixed-point';
import { Decimal } from '../../src/finance/money';

/** A numeric column's text: up to 20 integer digits and 0 to 4 decimals, maybe negative, maybe trailing zeros. */
const numericText = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 4 }), fc.bigInt({ min: 0n, max: 9999n }))
  .map(([negative, whole, decimals, fraction]) => {
    const digits = decimals ? `.${fraction.toString().padStart(4, '0').slice(0, decimals)}` : '';
    return `${negative ? '-' : ''}${whole}${digits}`;
  });

describe('fixed-point sums', () => {
  it('formats what it parses as decimal.js prints the same value', () => {
    fc.assert(fc.property(numericText, (text) => expect(formatFixed(parseFixed(text))).toBe(new Decimal(text).toFixed())));
  });

  it('adds exactly, as decimal.js does', () => {
    fc.assert(
      fc.property(fc.array(numericText, { maxLength: 30 }), (texts) => {
        const sum = texts.reduce((acc, text) => acc + parseFixed(text), 0n);
        expect(formatFixed(sum)).toBe(texts.reduce((acc, text) => acc.plus(text), new Decimal(0)).toFixed());
      }),
    );
  });

  it('writes the examples by hand', () => {
    expect(['0.1', '0.2'].map(parseFixed).reduce((a, b) => a + b)).toBe(3000n);
    expect(formatFixed(3000n)).toBe('0.3');
    expect(formatFixed(-5n)).toBe('-0.0005');
    expect(formatFixed(0n)).toBe('0');
    expect(formatFixed(parseFixed('12.5000'))).toBe('12.5');
  });

  it('refuses text that is not a numeric with at most 4 decimals', () => {
    for (const text of ['', '1e5', '0.00001', '1.', '.5', 'NaN', '1,5']) expect(() => parseFixed(text)).toThrow(RangeError);
  });
});
