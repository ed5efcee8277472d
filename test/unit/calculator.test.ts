import {
  CostLineInput,
  MemberInput,
  combineTaskFinances,
  compareText,
  computeTaskFinance,
  groupByRole,
  linesChangeDelta,
  rollUp,
  TaskInput,
  TaskTotals,
  totalsWithEstimateOf,
  warningsOf,
} from '../../src/finance/rules/calculator';
import { Decimal } from '../../src/finance/rules/money';
import { countingTurns } from '../support/turns';

const d = (v: string | number) => new Decimal(v);
const ids = { ann: 'a0000000-0000-4000-8000-000000000001', ben: 'b0000000-0000-4000-8000-000000000002', cy: 'c0000000-0000-4000-8000-000000000003', zed: 'f0000000-0000-4000-8000-000000000009' };

/** A member whose logged seconds (if any) all fall in one cost line, at its role and rate of today, on one day. */
function member(over: Partial<MemberInput> & { teamMemberId: string; name: string; loggedSeconds?: number }): MemberInput {
  const { loggedSeconds = 0, ...rest } = over;
  const hourlyRate = rest.hourlyRate ?? null;
  const billRate = rest.billRate ?? null;
  const base = {
    avatarUrl: null,
    jobRole: null,
    hourlyRate,
    billRate,
    costRateSource: hourlyRate === null ? ('none' as const) : ('role' as const),
    billRateSource: billRate === null ? ('none' as const) : ('role' as const),
    isAssignee: true,
    ...rest,
  };
  const line: CostLineInput = {
    jobRole: base.jobRole,
    hourlyRate: base.hourlyRate ?? d(0),
    billRate: base.billRate ?? d(0),
    costMissing: base.costRateSource === 'none',
    billMissing: base.billRateSource === 'none',
    seconds: loggedSeconds,
    firstDay: '2026-11-20',
    lastDay: '2026-11-20',
  };
  return { hasLoggedTime: loggedSeconds > 0, costLines: loggedSeconds > 0 ? [line] : [], ...base };
}

/** A task of an hourly project that bills nothing, unless `task` says otherwise. */
function compute(task: Pick<TaskInput, 'estimatedHours' | 'fixedCost' | 'members'> & Partial<TaskInput>, currency: string) {
  return computeTaskFinance({ billable: true, perDay: null, bills: false, ...task }, currency);
}

/** The figures an hourly task that bills nothing adds to its costs: no revenue, margins minus the totals. */
const noRevenue = (totalEstimatedCost: string, totalActualCost: string, missingRates = '0') => ({
  estimatedRevenue: '0',
  actualRevenue: '0',
  estimatedMargin: new Decimal(totalEstimatedCost).neg().toFixed(),
  actualMargin: new Decimal(totalActualCost).neg().toFixed(),
  missingRates,
});

/** Decimal fields as text, so expectations read like the hand calculation. */
function plain(value: unknown): unknown {
  if (Decimal.isDecimal(value)) return (value as Decimal).toFixed();
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

const threeWay = () => [
  member({ teamMemberId: ids.cy, name: 'Cy', jobRole: 'QA', hourlyRate: d('50.5'), loggedSeconds: 4000 }),
  member({ teamMemberId: ids.ben, name: 'Ben', jobRole: 'Dev', hourlyRate: d(100) }),
  member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Dev', hourlyRate: d(100), loggedSeconds: 3600 }),
];

describe('computeTaskFinance', () => {
  it('splits 10 h three ways, costs each member at its rate and adds the fixed cost to both totals', () => {
    const result = compute({ estimatedHours: d(10), fixedCost: d('99.99'), members: threeWay() }, 'USD');
    // Ann 3.34 h x 100 = 334; Ben 3.33 x 100 = 333; Cy 3.33 x 50.5 = 168.165 -> 168.17.
    // Logged: Ann 3600 s = 1 h -> 100; Cy 4000 s = 1.111 h -> 1.11 x 50.5 = 56.055 -> 56.06.
    expect(plain(result.members.map((m) => [m.name, m.estimatedHours, m.loggedHours, m.estimatedCost, m.actualCost]))).toEqual([
      ['Ann', '3.34', '1', '334', '100'],
      ['Ben', '3.33', '0', '333', '0'],
      ['Cy', '3.33', '1.11', '168.17', '56.06'],
    ]);
    expect(plain(result.totals)).toEqual({
      estimatedHours: '10',
      loggedHours: '2.11',
      estimatedLaborCost: '835.17',
      actualLaborCost: '156.06',
      fixedCost: '99.99',
      totalEstimatedCost: '935.16',
      totalActualCost: '256.05',
      ...noRevenue('935.16', '256.05'),
    });
  });

  it('lists a logger who is not an assignee with 0 estimate, and a missing rate as 0 under "Unassigned"', () => {
    const members = [...threeWay(), member({ teamMemberId: ids.zed, name: 'Zed', isAssignee: false, loggedSeconds: 1800 })];
    const result = compute({ estimatedHours: d(10), fixedCost: d(0), members }, 'USD');
    const zed = result.members.find((m) => m.name === 'Zed');
    expect(plain(zed)).toMatchObject({ jobRole: 'Unassigned', hourlyRate: '0', estimatedHours: '0', loggedHours: '0.5', estimatedCost: '0', actualCost: '0' });
    // Zed does not take a share of the estimate: the three assignees still split 10 h.
    expect(plain(result.members.map((m) => m.estimatedHours))).toEqual(['3.34', '3.33', '3.33', '0']);
    expect(result.totals.loggedHours.toFixed()).toBe('2.61');
  });

  it('leaves out people who neither are assigned nor logged time', () => {
    const members = [member({ teamMemberId: ids.zed, name: 'Zed', isAssignee: false, loggedSeconds: 0 })];
    expect(compute({ estimatedHours: d(1), fixedCost: d(0), members }, 'USD').members).toEqual([]);
  });

  it('keeps the estimate on a task without assignees and costs it nothing, fixed cost still counting', () => {
    const members = [member({ teamMemberId: ids.zed, name: 'Zed', isAssignee: false, loggedSeconds: 7200, jobRole: 'Dev', hourlyRate: d(80) })];
    const result = compute({ estimatedHours: d(8), fixedCost: d(500), members }, 'USD');
    expect(plain(result.totals)).toEqual({
      estimatedHours: '8',
      loggedHours: '2',
      estimatedLaborCost: '0',
      actualLaborCost: '160',
      fixedCost: '500',
      totalEstimatedCost: '500',
      totalActualCost: '660',
      ...noRevenue('500', '660'),
    });
  });

  it('charges nothing for a role whose rate is 0', () => {
    const members = [member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Volunteer', hourlyRate: d(0), loggedSeconds: 36000 })];
    const result = compute({ estimatedHours: d(5), fixedCost: d(0), members }, 'USD');
    expect(plain(result.members[0])).toMatchObject({ estimatedHours: '5', loggedHours: '10', estimatedCost: '0', actualCost: '0' });
  });

  it('rounds to whole yen', () => {
    const members = ['Ann', 'Ben', 'Cy'].map((name, i) =>
      member({ teamMemberId: Object.values(ids)[i] as string, name, jobRole: 'Dev', hourlyRate: d(3333) }),
    );
    const result = compute({ estimatedHours: d(10), fixedCost: d(1000), members }, 'JPY');
    // 3.34 x 3333 = 11132.22 -> 11132; 3.33 x 3333 = 11098.89 -> 11099.
    expect(plain(result.members.map((m) => m.estimatedCost))).toEqual(['11132', '11099', '11099']);
    expect(result.totals.totalEstimatedCost.toFixed()).toBe('34330');
  });

  it('rounds to the fils in KWD', () => {
    const members = [member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Dev', hourlyRate: d('12.345'), loggedSeconds: 11988 })];
    const result = compute({ estimatedHours: d('3.33'), fixedCost: d('0.125'), members }, 'KWD');
    // 3.33 x 12.345 = 41.10885 -> 41.109; 11988 s = 3.33 h -> the same.
    expect(plain(result.members[0])).toMatchObject({ estimatedCost: '41.109', actualCost: '41.109' });
    expect(result.totals.totalActualCost.toFixed()).toBe('41.234');
  });

  it('stays exact with large values', () => {
    const members = [member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Dev', hourlyRate: d('999999999.99'), loggedSeconds: 3_600_000_000 })];
    const result = compute({ estimatedHours: d('1000000'), fixedCost: d('1000000000'), members }, 'USD');
    expect(result.members[0]?.estimatedCost.toFixed()).toBe('999999999990000');
    expect(result.members[0]?.actualCost.toFixed()).toBe('999999999990000');
    expect(result.totals.totalEstimatedCost.toFixed()).toBe('1000000999990000');
  });

  it('orders members by name in code-unit order, then by id', () => {
    const members = [
      member({ teamMemberId: ids.cy, name: 'bob' }),
      member({ teamMemberId: ids.ben, name: 'Alice' }),
      member({ teamMemberId: ids.ann, name: 'Alice' }),
      member({ teamMemberId: ids.zed, name: 'alice' }),
    ];
    const result = compute({ estimatedHours: d(4), fixedCost: d(0), members }, 'USD');
    expect(result.members.map((m) => [m.name, m.teamMemberId])).toEqual([
      ['Alice', ids.ann],
      ['Alice', ids.ben],
      ['alice', ids.zed],
      ['bob', ids.cy],
    ]);
  });
});

describe('linesChangeDelta', () => {
  const line = (jobRole: string, rate: string, seconds: number, day: string): CostLineInput => ({
    jobRole,
    hourlyRate: d(rate),
    billRate: d(0),
    costMissing: false,
    billMissing: false,
    seconds,
    firstDay: day,
    lastDay: day,
  });

  it('takes a member\'s lines before out and its lines after in, each line rounded on its own', () => {
    // Ann logged 5000 s as Dev at 100 (one line: 1.39 h, 139.00); Dev goes to 110 for her later days,
    // so her lines become 2500 s at 100 (0.69 h, 69.00) and 2500 s at 110 (0.69 h, 75.90): -0.01 h,
    // +5.90 (in hundredths and cents). In KWD (3 decimals) the same is +5.900, 5900 fils.
    const ann = { before: [line('Dev', '100', 5000, '2026-05-20')], after: [line('Dev', '100', 2500, '2026-05-20'), line('Dev', '110', 2500, '2026-06-20')] };
    expect(linesChangeDelta([ann], 'USD')).toEqual({ hundredths: -1n, minorUnits: 590n });
    expect(linesChangeDelta([ann], 'KWD')).toEqual({ hundredths: -1n, minorUnits: 5900n });
    expect(linesChangeDelta([], 'USD')).toEqual({ hundredths: 0n, minorUnits: 0n });
  });

  it('counts no line without seconds, as the breakdown has none (costLinesOf keeps only seconds above 0)', () => {
    const odd = { before: [line('Dev', '100', 0, '2026-05-20')], after: [line('Dev', '110', -3600, '2026-05-20')] };
    expect(linesChangeDelta([odd], 'USD')).toEqual({ hundredths: 0n, minorUnits: 0n });
  });

  it('equals a whole recomputation of the task after the change, whichever members change (random tasks)', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const rates = ['0', '33.33', '50.5', '100', '101.125'];
    const lines = () => Array.from({ length: random(4) }, () => line(['Dev', 'QA'][random(2)] as string, rates[random(rates.length)] as string, 1 + random(20_000), '2026-03-01'));
    for (let round = 0; round < 300; round++) {
      const currency = ['USD', 'JPY', 'KWD'][random(3)] as string;
      const before = Array.from({ length: 1 + random(4) }, (_, i) => {
        const costLines = lines();
        return { ...member({ teamMemberId: `m${i}`, name: `M${i}`, isAssignee: random(2) === 0 }), hasLoggedTime: costLines.length > 0, costLines };
      });
      const changedAt = new Set(before.filter(() => random(2) === 0).map((m) => m.teamMemberId));
      // A changed member keeps some of its lines (a change leaves lines before its day as they were).
      const after = before.map((m) => (changedAt.has(m.teamMemberId) ? { ...m, costLines: [...m.costLines.filter(() => random(2) === 0), ...lines()] } : m));
      const changes = before.filter((m) => changedAt.has(m.teamMemberId)).map((m, i) => ({ before: m.costLines, after: after.filter((a) => changedAt.has(a.teamMemberId))[i]?.costLines ?? [] }));
      const task = { estimatedHours: d(3), fixedCost: d(0) };
      const was = compute({ ...task, members: before }, currency).totals;
      const is = compute({ ...task, members: after.map((m) => ({ ...m, hasLoggedTime: m.hasLoggedTime || m.costLines.length > 0 })) }, currency).totals;
      const delta = linesChangeDelta(changes, currency);
      const minor = currency === 'JPY' ? 0 : currency === 'KWD' ? 3 : 2;
      const applied = {
        loggedHours: plain(was.loggedHours.plus(d(delta.hundredths.toString()).div(100))),
        actualLaborCost: plain(was.actualLaborCost.plus(d(delta.minorUnits.toString()).div(10 ** minor))),
      };
      expect({ round, ...applied }).toEqual({ round, loggedHours: plain(is.loggedHours), actualLaborCost: plain(is.actualLaborCost) });
    }
  });
});

describe('groupByRole', () => {
  it('sums each role over its members, roles by name with "Unassigned" last', () => {
    const members = [...threeWay(), member({ teamMemberId: ids.zed, name: 'Zed', isAssignee: false, loggedSeconds: 1800 })];
    const { members: figures } = compute({ estimatedHours: d(10), fixedCost: d(0), members }, 'USD');
    const groups = groupByRole(figures);
    expect(plain(groups.map((g) => [g.jobRole, g.estimatedHours, g.loggedHours, g.estimatedCost, g.actualCost, g.members.map((m) => m.name)]))).toEqual([
      ['Dev', '6.67', '1', '667', '100', ['Ann', 'Ben']],
      ['QA', '3.33', '1.11', '168.17', '56.06', ['Cy']],
      ['Unassigned', '0', '0.5', '0', '0', ['Zed']],
    ]);
  });
});

describe('combineTaskFinances', () => {
  it('sums a member over tasks and the tasks into one total', () => {
    const parent = compute({ estimatedHours: d(10), fixedCost: d(100), members: threeWay() }, 'USD');
    const child = compute(
      { estimatedHours: d(1), fixedCost: d('0.5'), members: [member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Dev', hourlyRate: d(100), loggedSeconds: 18 })] },
      'USD',
    );
    const combined = combineTaskFinances([parent, child]);
    // Ann: 3.34 + 1 h estimated (334 + 100), 1 + 0.01 h logged (100 + 1).
    expect(plain(combined.members.find((m) => m.name === 'Ann'))).toMatchObject({ estimatedHours: '4.34', loggedHours: '1.01', estimatedCost: '434', actualCost: '101' });
    expect(plain(combined.totals)).toEqual({
      estimatedHours: '11',
      loggedHours: '2.12',
      estimatedLaborCost: '935.17',
      actualLaborCost: '157.06',
      fixedCost: '100.5',
      totalEstimatedCost: '1035.67',
      totalActualCost: '257.56',
      ...noRevenue('1035.67', '257.56'),
    });
  });
});

describe('compareText', () => {
  it('orders by code point, as PostgreSQL\'s "C" collation does', () => {
    const names = ['b', 'B', 'a', '\u{1F600} emoji', '\uFF21 fullwidth', 'ab', 'a'];
    // U+FF21 sorts before U+1F600 by code point; UTF-16 code units would put the emoji (0xD83D) first.
    expect([...names].sort(compareText)).toEqual(['B', 'a', 'a', 'ab', 'b', '\uFF21 fullwidth', '\u{1F600} emoji']);
  });
});

describe('rollUp', () => {
  /** Totals whose seven figures are all `value` (enough to follow what is summed where). */
  const totals = (value: number): TaskTotals => {
    const v = d(value);
    return {
      estimatedHours: v,
      loggedHours: v,
      estimatedLaborCost: v,
      actualLaborCost: v,
      fixedCost: v,
      totalEstimatedCost: v,
      totalActualCost: v,
      estimatedRevenue: v,
      actualRevenue: v,
      estimatedMargin: v,
      actualMargin: v,
      missingRates: v,
    };
  };
  // P (1, billable) has children C1 (10, not billable) and C2 (100, billable); C1 has G (1000, billable).
  // Q (10000, not billable) stands alone. Children come before their parents here on purpose.
  const tree = [
    { id: 'G', parentId: 'C1', billable: true, totals: totals(1000) },
    { id: 'C1', parentId: 'P', billable: false, totals: totals(10) },
    { id: 'P', parentId: null, billable: true, totals: totals(1) },
    { id: 'C2', parentId: 'P', billable: true, totals: totals(100) },
    { id: 'Q', parentId: null, billable: false, totals: totals(10000) },
  ];
  const summary = (rolled: Map<string, { totals: TaskTotals; tasks: number; subTasks: number }>) =>
    Object.fromEntries([...rolled].map(([id, r]) => [id, [r.totals.totalActualCost.toNumber(), r.totals.estimatedHours.toNumber(), r.tasks, r.subTasks]]));

  it('sums each task over itself and the descendants that pass, counting passing tasks and children holding one', async () => {
    expect(summary(await rollUp(tree, () => true))).toEqual({
      G: [1000, 1000, 1, 0],
      C1: [1010, 1010, 2, 1],
      C2: [100, 100, 1, 0],
      P: [1111, 1111, 4, 2],
      Q: [10000, 10000, 1, 0],
    });
    expect(summary(await rollUp(tree, (task) => task.billable))).toEqual({
      G: [1000, 1000, 1, 0],
      C1: [1000, 1000, 1, 1],
      C2: [100, 100, 1, 0],
      P: [1101, 1101, 3, 2],
      Q: [0, 0, 0, 0],
    });
  });

  it('lets other callbacks run while it sums, under a single root as under many', async () => {
    // One root with 40 children: the grouping takes a turn per task (41), the sums one per task and
    // one more per task with children (41 + 41); a walk that paused only between roots would give 41.
    const many = [
      { id: 'R', parentId: null, billable: true, totals: totals(1) },
      ...Array.from({ length: 40 }, (_, i) => ({ id: `T${i}`, parentId: 'R', billable: true, totals: totals(i) })),
    ];
    const { result: rolled, turns: turnsSeen } = await countingTurns(() => rollUp(many, () => true, 0));
    expect(rolled.get('R')?.totals.fixedCost.toNumber()).toBe(1 + (39 * 40) / 2);
    expect(rolled.get('R')?.subTasks).toBe(40);
    expect(turnsSeen).toBeGreaterThanOrEqual(2 * many.length);
  });
});

describe('revenue, margin, day rates and missing rates (docs/finance-rules.md R20-R25)', () => {
  /** A line of `seconds` on one day at a cost and a bill rate (null: none, costed at 0). */
  const line = (seconds: number, cost: string | null, bill: string | null, day = '2026-11-20'): CostLineInput => ({
    jobRole: 'Dev',
    hourlyRate: d(cost ?? 0),
    billRate: d(bill ?? 0),
    costMissing: cost === null,
    billMissing: bill === null,
    seconds,
    firstDay: day,
    lastDay: day,
  });

  it('costs 8 h at 105.00 a day with 8-hour days at exactly 105.00, and 7.5 h with 7.5-hour days too', () => {
    const ann = member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Dev', hourlyRate: d(105), billRate: d(840) });
    const eight = compute({ estimatedHours: d(8), fixedCost: d(0), members: [{ ...ann, hasLoggedTime: true, costLines: [line(28_800, '105', '840')] }], perDay: d(8) }, 'USD');
    // 8 x 105 / 8 = 105.00 (a rate of 13.13 an hour would give 105.04); revenue 8 x 840 / 8 = 840.
    expect(plain(eight.totals)).toMatchObject({ estimatedLaborCost: '105', actualLaborCost: '105', estimatedRevenue: '840', actualRevenue: '840' });
    const seven = compute({ estimatedHours: d('7.5'), fixedCost: d(0), members: [{ ...ann, hasLoggedTime: true, costLines: [line(27_000, '105', '840')] }], perDay: d('7.5') }, 'USD');
    expect(plain(seven.totals)).toMatchObject({ estimatedLaborCost: '105', actualLaborCost: '105', estimatedRevenue: '840', actualRevenue: '840' });
    // 3 h of a 7.5-hour day at 100.00: 3 x 100 / 7.5 = 40.00 exactly; 1.11 h: 111 / 7.5 = 14.80.
    const odd = compute({ estimatedHours: d(3), fixedCost: d(0), members: [{ ...ann, hourlyRate: d(100), hasLoggedTime: true, costLines: [line(4000, '100', '0')] }], perDay: d('7.5') }, 'USD');
    expect(plain(odd.totals)).toMatchObject({ estimatedLaborCost: '40', actualLaborCost: '14.8' });
  });

  it('earns on a billable task only; the margin is revenue less the total cost (fixed cost included)', () => {
    const ann = member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Dev', hourlyRate: d(50), billRate: d(80), loggedSeconds: 7200 });
    // 4 h estimated: cost 200, revenue 320; 2 h logged: cost 100, revenue 160; fixed cost 30.
    const billable = compute({ estimatedHours: d(4), fixedCost: d(30), members: [ann], bills: true }, 'USD');
    expect(plain(billable.totals)).toMatchObject({
      totalEstimatedCost: '230',
      totalActualCost: '130',
      estimatedRevenue: '320',
      actualRevenue: '160',
      estimatedMargin: '90',
      actualMargin: '30',
      missingRates: '0',
    });
    const internal = compute({ estimatedHours: d(4), fixedCost: d(30), members: [ann], bills: true, billable: false }, 'USD');
    expect(plain(internal.totals)).toMatchObject({ estimatedRevenue: '0', actualRevenue: '0', estimatedMargin: '-230', actualMargin: '-130' });
    expect(plain(internal.members[0]?.costLines[0])).toMatchObject({ billRate: '80', actualRevenue: '0' });
  });

  it('keeps each line\'s rates, and warns of a cost rate missing on a logged day, a bill rate only where one is billed', () => {
    // Ben: an override of 60 on some days, his role's 50 on others, no bill rate at all on one day.
    const ben = {
      ...member({ teamMemberId: ids.ben, name: 'Ben', jobRole: 'Dev', hourlyRate: d(60), billRate: d(90), costRateSource: 'member', isAssignee: false }),
      hasLoggedTime: true,
      costLines: [line(3600, '50', '90', '2026-11-01'), line(3600, '60', '90', '2026-11-10'), line(1800, '60', null, '2026-11-12')],
    };
    const cy = { ...member({ teamMemberId: ids.cy, name: 'Cy', isAssignee: false }), hasLoggedTime: true, costLines: [line(3600, null, null)] };
    const result = compute({ estimatedHours: d(0), fixedCost: d(0), members: [ben, cy], bills: true }, 'USD');
    expect(plain(result.members[0]?.costLines.map((l) => [l.hourlyRate, l.billRate, l.loggedHours, l.actualCost, l.actualRevenue]))).toEqual([
      ['50', '90', '1', '50', '90'],
      ['60', '90', '1', '60', '90'],
      ['60', '0', '0.5', '30', '0'],
    ]);
    expect(plain(result.totals)).toMatchObject({ actualLaborCost: '140', actualRevenue: '180', actualMargin: '40', missingRates: '1' });
    expect(warningsOf(result.members)).toEqual([
      { code: 'MISSING_BILL_RATE', teamMemberId: ids.ben, name: 'Ben' },
      { code: 'MISSING_COST_RATE', teamMemberId: ids.cy, name: 'Cy' },
      { code: 'MISSING_BILL_RATE', teamMemberId: ids.cy, name: 'Cy' },
    ]);
    // A project without any bill rate says nothing of bill rates; a non-billable task neither.
    expect(warningsOf(compute({ estimatedHours: d(0), fixedCost: d(0), members: [ben, cy] }, 'USD').members)).toEqual([
      { code: 'MISSING_COST_RATE', teamMemberId: ids.cy, name: 'Cy' },
    ]);
  });

  it('warns of an assignee without a rate today only when its share of the estimate is above 0', () => {
    const dan = member({ teamMemberId: ids.zed, name: 'Dan', jobRole: 'Tester' });
    expect(plain(compute({ estimatedHours: d(2), fixedCost: d(0), members: [dan] }, 'USD').totals)).toMatchObject({ missingRates: '2' });
    const none = compute({ estimatedHours: d(0), fixedCost: d(0), members: [dan] }, 'USD');
    expect(warningsOf(none.members)).toEqual([]);
    expect(plain(none.totals)).toMatchObject({ missingRates: '0' });
  });

  it('re-costs an estimate with its revenue and keeps the logged days\' part of the missing rates (totalsWithEstimateOf)', () => {
    const ann = member({ teamMemberId: ids.ann, name: 'Ann', jobRole: 'Dev', hourlyRate: d(50), billRate: d(80) });
    const task = { estimatedHours: d(3), fixedCost: d(10), members: [ann], billable: true, perDay: null, bills: true };
    const totals = totalsWithEstimateOf(task, { loggedHours: d(1), actualLaborCost: d(50), actualRevenue: d(80), missingRates: d(3) }, 'USD');
    expect(plain(totals)).toMatchObject({ estimatedLaborCost: '150', estimatedRevenue: '240', estimatedMargin: '80', actualMargin: '20', missingRates: '1' });
  });
});
