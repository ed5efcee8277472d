import { headroomOf, percentUsedOf, reaches, remainingOf } from '../../src/finance/rules/budget';
import { toDecimal } from '../../src/finance/rules/money';
import { currentPeriod, hasBudget, monthPeriod } from '../../src/finance/read-model/budget-watch';

const d = (value: string) => toDecimal(value);

describe('budget rules (docs/finance-rules.md R28)', () => {
  it('compares spent with a threshold exactly, not through the rounded percentage', () => {
    expect(reaches(d('1000'), d('799.99'), 80)).toBe(false);
    expect(percentUsedOf(d('1000'), d('799.99'))?.toFixed()).toBe('80'); // 79.999 rounds to 80.00
    expect(reaches(d('1000'), d('800'), 80)).toBe(true);
    expect(reaches(d('0.03'), d('0.01'), 33)).toBe(true); // 1 x 100 >= 3 x 33
    expect(reaches(d('0.03'), d('0.01'), 34)).toBe(false);
    expect(reaches(d('100'), d('1000'), 1000)).toBe(true);
  });

  it('leaves as headroom the distance to the lowest threshold not yet reached', () => {
    expect(headroomOf(d('1000'), d('450'), [80, 50, 100])?.toFixed()).toBe('50'); // 500 - 450
    expect(headroomOf(d('1000'), d('500'), [50, 80])?.toFixed()).toBe('300'); // 50 % reached: 800 - 500
    expect(headroomOf(d('0.03'), d('0'), [33])?.toFixed()).toBe('0.0099'); // 0.03 x 33 / 100
    expect(headroomOf(d('1000'), d('1000'), [50, 100])).toBeNull(); // every threshold reached
    expect(headroomOf(null, d('0'), [50])).toBeNull();
    expect(headroomOf(d('0'), d('0'), [50])).toBeNull();
  });

  it('rounds percent_used half away from zero to 2 decimals, above 100 too', () => {
    expect(percentUsedOf(d('300'), d('100'))?.toFixed()).toBe('33.33');
    expect(percentUsedOf(d('300'), d('101'))?.toFixed()).toBe('33.67');
    expect(percentUsedOf(d('8'), d('0.0004'))?.toFixed()).toBe('0.01'); // 0.005 -> 0.01
    expect(percentUsedOf(d('1000'), d('1234.5'))?.toFixed()).toBe('123.45');
    expect(remainingOf(d('1000'), d('1234.5'))?.toFixed()).toBe('-234.5');
  });

  it('gives a null or zero budget no remaining, no percentage and no threshold', () => {
    for (const budget of [null, d('0')]) {
      expect(remainingOf(budget, d('5'))).toBeNull();
      expect(percentUsedOf(budget, d('5'))).toBeNull();
      expect(reaches(budget, d('5'), 1)).toBe(false);
    }
  });

  it('watches a project with an active budget and at least one alert', () => {
    expect(hasBudget({ budget: null, hours_budget: null, budget_alerts: [80] })).toBe(false);
    expect(hasBudget({ budget: '0.0000', hours_budget: '0.00', budget_alerts: [80] })).toBe(false);
    expect(hasBudget({ budget: '10.0000', hours_budget: null, budget_alerts: [] })).toBe(false);
    expect(hasBudget({ budget: null, hours_budget: '0.50', budget_alerts: [100] })).toBe(true);
  });

  it('takes the month in the project zone', () => {
    expect(monthPeriod('2028-02')).toEqual({ kind: 'month', key: '2028-02', from: '2028-02-01', to: '2028-02-29' });
    expect(monthPeriod('2026-12')).toMatchObject({ from: '2026-12-01', to: '2026-12-31' });
    // 11:30 UTC on 31 March 2026 is 00:30 on 1 April in Auckland, 04:30 on 31 March in Los Angeles.
    const at = '2026-03-31T11:30:00Z';
    expect(currentPeriod({ budget_period: 'month', time_zone: 'Pacific/Auckland' }, at).key).toBe('2026-04');
    expect(currentPeriod({ budget_period: 'month', time_zone: 'America/Los_Angeles' }, at).key).toBe('2026-03');
    expect(currentPeriod({ budget_period: 'total', time_zone: 'Pacific/Auckland' }, at)).toEqual({ kind: 'total', key: 'total', from: null, to: null });
  });
});
