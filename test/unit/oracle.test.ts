import { Decimal, isSupportedCurrency } from '../../src/finance/rules/money';
import { ISO_4217_MINOR_UNITS, byCodePoint, isoMinorUnit, oracleBreakdown } from '../support/oracle';

/*
 * The oracle (test/support/oracle.ts) is what the suite trusts, so its own rules are checked here by
 * hand: text ordered by code point (the order decides who gets a split's left-over hundredth), and
 * ISO 4217's minor unit of every currency the service accepts, cross-checked with ICU's.
 */
type Inputs = Parameters<typeof oracleBreakdown>[0];

const FULL_WIDTH_A = '\uFF21nn'; // U+FF21: one UTF-16 unit, 0xFF21
const GRINNING = '\u{1F600} Ann'; // U+1F600: a surrogate pair, 0xD83D 0xDE00

describe('byCodePoint', () => {
  it('orders by code point, not by UTF-16 unit', () => {
    // By code point U+FF21 < U+1F600; by UTF-16 unit 0xD83D < 0xFF21, the other way round.
    expect(GRINNING < FULL_WIDTH_A).toBe(true);
    expect(byCodePoint(FULL_WIDTH_A, GRINNING)).toBeLessThan(0);
    expect(byCodePoint(GRINNING, FULL_WIDTH_A)).toBeGreaterThan(0);
    expect(['bob', '\u00C1nn', 'alice', GRINNING, 'Alice', FULL_WIDTH_A, 'Al'].sort(byCodePoint)).toEqual(['Al', 'Alice', 'alice', 'bob', '\u00C1nn', FULL_WIDTH_A, GRINNING]);
    expect(byCodePoint('same', 'same')).toBe(0);
  });
});

/** Inputs of one project with one task (no logs), every member in one role at `rate` from the beginning. */
function inputs(
  currency: string,
  estimate: string,
  rate: string | null,
  members: { id: string; name: string }[],
  logs: Inputs['logs'] = [],
  pricing: { perDay?: string; bill?: string | null; overrides?: Inputs['overridesOf'] } = {},
): Inputs {
  const task = { id: 't1', name: 'Task', parent_task_id: null, billable: true, estimated_hours: estimate, fixed_cost: '0', status: null, priority: null, phase: null };
  return {
    projectId: 'p1',
    currency,
    project: { id: 'p1', name: 'P', currency, budget: null, rate_unit: pricing.perDay ? 'day' : 'hour', hours_per_day: Number(pricing.perDay ?? 8) },
    perDay: pricing.perDay ? new Decimal(pricing.perDay) : null,
    bills: pricing.bill !== undefined && pricing.bill !== null,
    today: '2026-11-20',
    range: {},
    tasks: [task],
    assignees: new Map([['t1', members.map((m) => m.id)]]),
    logs,
    members: new Map(members.map((m) => [m.id, { name: m.name, avatar_url: null }])),
    rolesOf: new Map(members.map((m) => [m.id, [{ effective_from: '2020-01-01', value: 'r1' }]])),
    roleName: new Map([['r1', 'Dev']]),
    ratesOf: new Map([['r1', [{ effective_from: '1970-01-01', value: { cost: rate, bill: pricing.bill ?? null } }]]]),
    overridesOf: pricing.overrides ?? new Map(),
  };
}

describe('oracleBreakdown', () => {
  it("gives a split's left-over hundredth to the member first by code point", () => {
    // 0.01 h over two: the one hundredth goes to "Ａnn" (U+FF21), first by code point, whatever the ids.
    const body = oracleBreakdown(inputs('USD', '0.01', '100', [{ id: 'm1', name: GRINNING }, { id: 'm0', name: FULL_WIDTH_A }]), 't1', false);
    expect(body.members.map((m) => [m.name, m.estimated_hours, m.estimated_cost])).toEqual([[FULL_WIDTH_A, 0.01, 1], [GRINNING, 0, 0]]);
  });

  it('rounds a cost that lands on half of the minor unit away from zero, in currencies of 0, 2, 3 and 4 decimals', () => {
    // 1800 s is 0.5 h; 0.5 h at a rate whose last minor digit is odd lands on half a minor unit.
    const cases: [string, string, number][] = [
      ['JPY', '101', 51], // 50.5 -> 51
      ['USD', '40.01', 20.01], // 20.005 -> 20.01
      ['KWD', '1.001', 0.501], // 0.5005 -> 0.501
      ['CLF', '1.0001', 0.5001], // 0.50005 -> 0.5001
    ];
    for (const [currency, rate, cost] of cases) {
      const body = oracleBreakdown(inputs(currency, '0.5', rate, [{ id: 'm1', name: 'Ann' }], [{ task_id: 't1', team_member_id: 'm1', seconds: 1800, day: '2026-11-02' }]), 't1', false);
      expect({ currency, estimated: body.task.estimated_labor_cost, actual: body.task.actual_labor_cost }).toEqual({ currency, estimated: cost, actual: cost });
    }
  });
});

describe('oracleBreakdown with bill rates, overrides and day rates (docs/finance-rules.md R20-R25)', () => {
  it('costs 8 h at 105 a day with 8-hour days at 105.00, and 7.5 h of a 7.5-hour day at 105.00', () => {
    for (const [perDay, seconds] of [['8', 28_800], ['7.5', 27_000]] as const) {
      const body = oracleBreakdown(
        inputs('USD', '0', '105', [{ id: 'm1', name: 'Ann' }], [{ task_id: 't1', team_member_id: 'm1', seconds, day: '2026-11-02' }], { perDay, bill: '840' }),
        't1',
        false,
      );
      expect(body.task).toMatchObject({ actual_labor_cost: 105, actual_revenue: 840, actual_margin: 735, has_missing_rates: false });
      expect(body.members[0]).toMatchObject({ day_rate: 105, day_bill_rate: 840 });
    }
  });

  it('lets a member\'s own rate beat its role\'s from its day on, each rate on its own', () => {
    const overrides = new Map([['m1', [{ effective_from: '2026-11-10', value: { cost: '60', bill: null } }]]]);
    const logs = [
      { task_id: 't1', team_member_id: 'm1', seconds: 3600, day: '2026-11-02' },
      { task_id: 't1', team_member_id: 'm1', seconds: 3600, day: '2026-11-12' },
    ];
    const body = oracleBreakdown(inputs('USD', '0', '50', [{ id: 'm1', name: 'Ann' }], logs, { bill: '90', overrides }), 't1', false);
    expect(body.members[0]?.cost_lines.map((l) => [l.hourly_rate, l.bill_rate, l.actual_cost, l.actual_revenue])).toEqual([
      [50, 90, 50, 90],
      [60, 90, 60, 90],
    ]);
    expect(body.members[0]).toMatchObject({ cost_rate_source: 'member', bill_rate_source: 'role' });
    expect(body.warnings).toEqual([]);
  });
});

describe('the oracle\'s ISO 4217 minor units', () => {
  const accepted: string[] = [];
  for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) for (let c = 65; c <= 90; c++) {
    const code = String.fromCharCode(a, b, c);
    if (isSupportedCurrency(code)) accepted.push(code);
  }

  it('knows every code the service accepts', () => {
    expect(accepted.length).toBeGreaterThan(150);
    expect(accepted.filter((code) => !ISO_4217_MINOR_UNITS.has(code))).toEqual([]);
    expect(() => isoMinorUnit('XAU')).toThrow(/no ISO 4217 minor unit/);
  });

  /*
   * ICU formats with CLDR's display digits, which differ from ISO 4217's minor unit for currencies whose
   * smallest coin is out of use (CLDR shows 0 decimals where ISO keeps 2, or 3 for IQD): those, and only
   * those, are listed here, so either table changing shows up.
   */
  const CLDR_DISPLAYS_NONE = ['AFN', 'ALL', 'COP', 'HUF', 'IDR', 'IQD', 'IRR', 'KPW', 'LAK', 'LBP', 'MGA', 'MMK', 'PKR', 'SLL', 'SOS', 'SYP', 'YER'];

  it('agrees with ICU, except where CLDR shows fewer decimals than ISO 4217 has', () => {
    const icu = (code: string) => new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits;
    const differing = accepted.filter((code) => icu(code) !== isoMinorUnit(code));
    expect(differing).toEqual(CLDR_DISPLAYS_NONE);
    for (const code of differing) expect({ code, icu: icu(code) }).toEqual({ code, icu: 0 });
    expect(Object.fromEntries(['JPY', 'USD', 'KWD', 'CLF', 'UYW', 'UYI', 'IQD'].map((code) => [code, isoMinorUnit(code)]))).toEqual({
      JPY: 0,
      USD: 2,
      KWD: 3,
      CLF: 4,
      UYW: 4,
      UYI: 0,
      IQD: 3,
    });
  });
});
