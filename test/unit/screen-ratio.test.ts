import { ratioPercent } from '../../web/src/ratio';

/*
 * The screen's margin % (actual_margin / actual_revenue, one decimal): worked out from the decimals'
 * text with integers, rounded half away from zero. Expectations by hand.
 */
describe('ratioPercent', () => {
  it.each([
    [-20, 480, '-4.2%'], // -4.1666...
    ['160.00', '660.00', '24.2%'], // 24.2424...
    [1, 8, '12.5%'],
    ['-1', 8, '-12.5%'],
    ['10.05', 100, '10.1%'], // exactly 10.05: half away from zero
    ['-10.05', 100, '-10.1%'],
    ['10.049', 100, '10.0%'],
    ['0.1', '0.3', '33.3%'], // a binary float would see 0.1 / 0.3 = 0.33333333333333337
    [2, 3, '66.7%'],
    [-2, -3, '66.7%'],
    [150, 100, '150.0%'],
    [0, 5, '0.0%'],
    ['-0.0004', 1, '0.0%'],
    ['123456789012.34', '987654321098.76', '12.5%'],
  ])('%s of %s is %s', (part, whole, expected) => {
    expect(ratioPercent(part, whole)).toBe(expected);
  });

  it('has no percentage of nothing, or of text that is not a decimal', () => {
    expect(ratioPercent(5, 0)).toBeNull();
    expect(ratioPercent(5, '0.00')).toBeNull();
    expect(ratioPercent('1e3', 10)).toBeNull();
  });
});
