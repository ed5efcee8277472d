import ExcelJS from 'exceljs';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime } from '../../support/fixtures';
import { binary, parseCsv } from '../../support/files';

/*
 * Acceptance cases of docs/finance-rules.md R20-R27 (revenue, cost and margin), as an outside checker writes them: through HTTP only, every
 * expected figure computed by hand in the comments, every field list of rule 7 checked exactly.
 *
 * The main project (`rated()`), USD, rates per hour, card from the beginning:
 *   Dev: cost 50, bill 80;  QA: cost 40, no bill rate (null).
 *   Ann (Dev) has own rates: from 2026-07-01 cost 60, bill 95; from 2026-08-01 cost null (defers to
 *   Dev's 50), bill 100.  Bob (QA) has none.
 *   P: billable, 10 h estimated, assignees Ann and Bob, fixed cost 25.
 *   C: child of P, non-billable, 3 h estimated, assignee Ann.
 *   Logs on P: Ann 2 h on 2026-06-30, 3 h on 2026-07-15, 1.5 h on 2026-08-02; Bob 1 h on 2026-07-10.
 *   Log on C: Ann 1 h on 2026-07-20.
 * Today (after 2026-08-01): Ann costs 50 (role: her own entry in force has a null cost rate) and bills
 * 100 (member); Bob costs 40 (role) and bills 0 (none).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

type Row = Record<string, unknown>;
const keys = (value: unknown) => Object.keys(value as object).sort();

const MEMBER_KEYS = [
  'team_member_id',
  'name',
  'avatar_url',
  'hourly_rate',
  'bill_rate',
  'estimated_hours',
  'logged_hours',
  'estimated_cost',
  'actual_cost',
  'estimated_revenue',
  'actual_revenue',
  'cost_rate_source',
  'bill_rate_source',
  'cost_lines',
].sort();
const LINE_KEYS = ['job_role', 'hourly_rate', 'bill_rate', 'logged_hours', 'actual_cost', 'actual_revenue', 'first_day', 'last_day'].sort();
const GROUP_KEYS = ['jobRole', 'estimated_hours', 'logged_hours', 'estimated_cost', 'actual_cost', 'estimated_revenue', 'actual_revenue', 'members'].sort();
const TASK_FIGURES = [
  'estimated_hours',
  'logged_hours',
  'estimated_labor_cost',
  'actual_labor_cost',
  'fixed_cost',
  'total_estimated_cost',
  'total_actual_cost',
  'estimated_revenue',
  'actual_revenue',
  'estimated_margin',
  'actual_margin',
  'has_missing_rates',
];
const TASK_KEYS = ['id', 'name', 'project_id', 'billable', 'currency', ...TASK_FIGURES].sort();
const SUM_KEYS = [...TASK_FIGURES, 'variance'].sort();
const ROW_KEYS = [...TASK_KEYS, 'parent_task_id', 'sub_tasks_count', 'variance', 'status', 'priority', 'phase', 'assignees'].sort();

async function card(projectId: string, roles: { job_role_id: string; hourly_rate: number | null; bill_rate?: number | null }[], effectiveFrom = '1970-01-01') {
  await h.api.put(`/api/projects/${projectId}/rate-card`, { roles, effective_from: effectiveFrom }).expect(200);
}

async function ownRates(projectId: string, memberId: string, rates: { hourly_rate?: number | null; bill_rate?: number | null; effective_from?: string }) {
  await h.api.put(`/api/projects/${projectId}/members/${memberId}/rates`, rates).expect(200);
}

async function getBreakdown(taskId: string, query = '') {
  return (await h.api.get(`/api/project-finance/task/${taskId}/breakdown${query}`).expect(200)).body.body;
}

async function getList(projectId: string, query = '') {
  return (await h.api.get(`/api/project-finance/project/${projectId}/tasks${query}`).expect(200)).body.body;
}

const byName = (members: Row[], name: string) => members.find((m) => m.name === name) as Row;

async function rated() {
  const project = await createProject(h.api);
  const dev = await createJobRole(h.api);
  const qa = await createJobRole(h.api);
  await card(project.id, [
    { job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 },
    { job_role_id: qa.id, hourly_rate: 40, bill_rate: null },
  ]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bob = await createMember(h.api, { name: 'Bob' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await addToProject(h.api, project.id, bob.id, qa.id);
  await ownRates(project.id, ann.id, { hourly_rate: 60, bill_rate: 95, effective_from: '2026-07-01' });
  await ownRates(project.id, ann.id, { hourly_rate: null, bill_rate: 100, effective_from: '2026-08-01' });
  const p = await createTask(h.api, project.id, { name: 'P', estimated_hours: 10, fixed_cost: 25, billable: true, assignee_ids: [ann.id, bob.id] });
  const c = await createTask(h.api, project.id, { name: 'C', estimated_hours: 3, billable: false, parent_task_id: p.id, assignee_ids: [ann.id] });
  await logTime(h.api, p.id, ann.id, { hours: 2, logged_at: '2026-06-30T10:00:00Z' });
  await logTime(h.api, p.id, ann.id, { hours: 3, logged_at: '2026-07-15T10:00:00Z' });
  await logTime(h.api, p.id, ann.id, { hours: 1.5, logged_at: '2026-08-02T10:00:00Z' });
  await logTime(h.api, p.id, bob.id, { hours: 1, logged_at: '2026-07-10T10:00:00Z' });
  await logTime(h.api, c.id, ann.id, { hours: 1, logged_at: '2026-07-20T10:00:00Z' });
  return { project, dev, qa, ann, bob, p, c };
}

describe('an hour project: overrides dated mid-way, revenue on billable tasks only, margins (section 8 rules 1-3, 5-7)', () => {
  it("answers P's breakdown with every field of rule 7, exactly, and every figure by hand", async () => {
    const { dev, qa, ann, bob, p } = await rated();
    const body = await getBreakdown(p.id);
    expect(keys(body)).toEqual(['grouped_members', 'members', 'task', 'warnings']);
    expect(keys(body.task)).toEqual(TASK_KEYS);
    // Estimate 10 h split 5 / 5 (Ann, Bob by name).
    // Ann today: cost 50 (role), bill 100 (member): 5 x 50 = 250, 5 x 100 = 500.
    // Ann's lines: 06-30 (Dev, 50, 80) 2 h: 100, 160; 07-15 (Dev, 60, 95) 3 h: 180, 285;
    //   08-02 (Dev, 50, 100) 1.5 h: 75, 150 (same role and cost rate as 06-30, other bill rate: own line).
    //   Ann: 6.5 h, 355, 595.
    // Bob: 5 x 40 = 200, 5 x 0 = 0; line 07-10 (QA, 40, 0) 1 h: 40, 0.
    const annEntry = {
      team_member_id: ann.id,
      name: 'Ann',
      avatar_url: null,
      hourly_rate: 50,
      bill_rate: 100,
      cost_rate_source: 'role',
      bill_rate_source: 'member',
      estimated_hours: 5,
      logged_hours: 6.5,
      estimated_cost: 250,
      actual_cost: 355,
      estimated_revenue: 500,
      actual_revenue: 595,
      cost_lines: [
        { job_role: dev.name, hourly_rate: 50, bill_rate: 80, logged_hours: 2, actual_cost: 100, actual_revenue: 160, first_day: '2026-06-30', last_day: '2026-06-30' },
        { job_role: dev.name, hourly_rate: 60, bill_rate: 95, logged_hours: 3, actual_cost: 180, actual_revenue: 285, first_day: '2026-07-15', last_day: '2026-07-15' },
        { job_role: dev.name, hourly_rate: 50, bill_rate: 100, logged_hours: 1.5, actual_cost: 75, actual_revenue: 150, first_day: '2026-08-02', last_day: '2026-08-02' },
      ],
    };
    const bobEntry = {
      team_member_id: bob.id,
      name: 'Bob',
      avatar_url: null,
      hourly_rate: 40,
      bill_rate: 0,
      cost_rate_source: 'role',
      bill_rate_source: 'none',
      estimated_hours: 5,
      logged_hours: 1,
      estimated_cost: 200,
      actual_cost: 40,
      estimated_revenue: 0,
      actual_revenue: 0,
      cost_lines: [{ job_role: qa.name, hourly_rate: 40, bill_rate: 0, logged_hours: 1, actual_cost: 40, actual_revenue: 0, first_day: '2026-07-10', last_day: '2026-07-10' }],
    };
    expect(body.members).toEqual([
      { ...annEntry, job_title_name: dev.name },
      { ...bobEntry, job_title_name: qa.name },
    ]);
    for (const m of body.members) {
      expect(keys(m)).toEqual([...MEMBER_KEYS, 'job_title_name'].sort());
      for (const line of m.cost_lines) expect(keys(line)).toEqual(LINE_KEYS);
    }
    // Groups by jobRole name; whichever name sorts first comes first.
    const groups = [
      { jobRole: dev.name, estimated_hours: 5, logged_hours: 6.5, estimated_cost: 250, actual_cost: 355, estimated_revenue: 500, actual_revenue: 595, members: [annEntry] },
      { jobRole: qa.name, estimated_hours: 5, logged_hours: 1, estimated_cost: 200, actual_cost: 40, estimated_revenue: 0, actual_revenue: 0, members: [bobEntry] },
    ].sort((a, b) => (a.jobRole < b.jobRole ? -1 : 1));
    expect(body.grouped_members).toEqual(groups);
    for (const g of body.grouped_members) {
      expect(keys(g)).toEqual(GROUP_KEYS);
      for (const m of g.members) expect(keys(m)).toEqual(MEMBER_KEYS);
    }
    // Labor: 250 + 200 = 450 estimated, 355 + 40 = 395 actual; + 25 fixed: 475, 420.
    // Margins: 500 - 475 = 25; 595 - 420 = 175 (the fixed cost lowers both).
    expect(body.task).toEqual({
      id: p.id,
      name: 'P',
      project_id: expect.any(String),
      billable: true,
      currency: 'USD',
      estimated_hours: 10,
      logged_hours: 7.5,
      estimated_labor_cost: 450,
      actual_labor_cost: 395,
      fixed_cost: 25,
      total_estimated_cost: 475,
      total_actual_cost: 420,
      estimated_revenue: 500,
      actual_revenue: 595,
      estimated_margin: 25,
      actual_margin: 175,
      has_missing_rates: true,
    });
    // The project has bill-rate entries; Bob has an estimate on a billable task and no bill rate.
    expect(body.warnings).toEqual([{ code: 'MISSING_BILL_RATE', team_member_id: bob.id, name: 'Bob' }]);
  });

  it('earns nothing on the non-billable child, whose margin is minus its cost; no bill-rate warning there', async () => {
    const { dev, ann, c } = await rated();
    const body = await getBreakdown(c.id);
    // Ann: 3 h x 50 = 150 estimated; line 07-20 (Dev, 60, 95) 1 h: 60, revenue 0 (non-billable).
    expect(body.members).toEqual([
      {
        team_member_id: ann.id,
        name: 'Ann',
        avatar_url: null,
        job_title_name: dev.name,
        hourly_rate: 50,
        bill_rate: 100,
        cost_rate_source: 'role',
        bill_rate_source: 'member',
        estimated_hours: 3,
        logged_hours: 1,
        estimated_cost: 150,
        actual_cost: 60,
        estimated_revenue: 0,
        actual_revenue: 0,
        cost_lines: [{ job_role: dev.name, hourly_rate: 60, bill_rate: 95, logged_hours: 1, actual_cost: 60, actual_revenue: 0, first_day: '2026-07-20', last_day: '2026-07-20' }],
      },
    ]);
    expect(body.grouped_members).toEqual([expect.objectContaining({ estimated_revenue: 0, actual_revenue: 0, estimated_cost: 150, actual_cost: 60 })]);
    expect(body.task).toMatchObject({
      billable: false,
      total_estimated_cost: 150,
      total_actual_cost: 60,
      estimated_revenue: 0,
      actual_revenue: 0,
      estimated_margin: -150,
      actual_margin: -60,
      has_missing_rates: false,
    });
    expect(body.warnings).toEqual([]);
  });

  it('rolls the subtree up and lists it: exact sums of the rounded parts, in rows, totals and groups', async () => {
    const { project, ann, bob, p, c } = await rated();
    const sub = await getBreakdown(p.id, '?include_subtasks=true');
    // Ann: 5 + 3 = 8 h, 250 + 150 = 400, 355 + 60 = 415, revenue 500 + 0, 595 + 0. Bob as on P.
    expect(byName(sub.members, 'Ann')).toMatchObject({ team_member_id: ann.id, estimated_hours: 8, logged_hours: 7.5, estimated_cost: 400, actual_cost: 415, estimated_revenue: 500, actual_revenue: 595 });
    expect(byName(sub.members, 'Bob')).toMatchObject({ team_member_id: bob.id, estimated_hours: 5, logged_hours: 1, estimated_cost: 200, actual_cost: 40, estimated_revenue: 0, actual_revenue: 0 });
    // Task: 13 h, 8.5 h logged; labor 600 / 455; fixed 25; totals 625 / 480; margins 500 - 625 = -125, 595 - 480 = 115
    // (= P's 25 + C's -150 and P's 175 + C's -60).
    const subtree = {
      estimated_hours: 13,
      logged_hours: 8.5,
      estimated_labor_cost: 600,
      actual_labor_cost: 455,
      fixed_cost: 25,
      total_estimated_cost: 625,
      total_actual_cost: 480,
      estimated_revenue: 500,
      actual_revenue: 595,
      estimated_margin: -125,
      actual_margin: 115,
      has_missing_rates: true,
    };
    expect(sub.task).toMatchObject(subtree);
    expect(sub.warnings).toEqual([{ code: 'MISSING_BILL_RATE', team_member_id: bob.id, name: 'Bob' }]);

    const list = await getList(project.id);
    expect(keys(list.project)).toEqual(expect.arrayContaining(['id', 'name', 'currency', 'budget', 'rate_unit', 'hours_per_day']));
    expect(list.project).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
    expect(list.tasks).toHaveLength(1);
    expect(keys(list.tasks[0])).toEqual(ROW_KEYS);
    // variance = 625 - 480 = 145.
    expect(list.tasks[0]).toMatchObject({ id: p.id, ...subtree, variance: 145 });
    expect(keys(list.totals)).toEqual(SUM_KEYS);
    expect(list.totals).toEqual({ ...subtree, variance: 145 });

    const children = await getList(project.id, `?parent_task_id=${p.id}`);
    expect(children.tasks).toEqual([
      expect.objectContaining({ id: c.id, estimated_revenue: 0, actual_revenue: 0, estimated_margin: -150, actual_margin: -60, variance: 90, has_missing_rates: false }),
    ]);
    expect(children.totals).toMatchObject({ estimated_margin: -150, actual_margin: -60, has_missing_rates: false });

    const grouped = await getList(project.id, '?group_by=priority');
    expect(grouped.groups).toHaveLength(1);
    expect(keys(grouped.groups[0])).toEqual(['group_name', 'task_ids', ...SUM_KEYS].sort());
    expect(grouped.groups[0]).toEqual({ group_name: 'None', task_ids: [p.id], ...subtree, variance: 145 });

    // Billable filter: only P's own part (C is non-billable): P's figures, margins 25 / 175.
    const billable = await getList(project.id, '?billable_filter=billable');
    expect(billable.totals).toMatchObject({ total_estimated_cost: 475, total_actual_cost: 420, estimated_revenue: 500, actual_revenue: 595, estimated_margin: 25, actual_margin: 175 });
    const nonBillable = await getList(project.id, '?billable_filter=non-billable');
    expect(nonBillable.totals).toMatchObject({ total_estimated_cost: 150, total_actual_cost: 60, estimated_revenue: 0, actual_revenue: 0, estimated_margin: -150, actual_margin: -60, has_missing_rates: false });
  });

  it('counts only the days of from/to in the actuals, revenue and margins included', async () => {
    const { project, p } = await rated();
    // July only on P: Ann's 07-15 line (180, 285) and Bob's 07-10 line (40, 0): labor 220, total 245,
    // revenue 285, margin 285 - 245 = 40. Estimates unchanged: 500 - 475 = 25.
    const july = await getBreakdown(p.id, '?from=2026-07-01&to=2026-07-31');
    expect(july.task).toMatchObject({ logged_hours: 4, actual_labor_cost: 220, total_actual_cost: 245, actual_revenue: 285, actual_margin: 40, estimated_revenue: 500, estimated_margin: 25 });
    expect(byName(july.members, 'Ann').cost_lines).toEqual([expect.objectContaining({ hourly_rate: 60, bill_rate: 95, logged_hours: 3, actual_revenue: 285 })]);
    // The list's row adds C's 07-20 hour (60, no revenue): labor 280, total 305, revenue 285, margin -20;
    // estimated margin -125; variance 625 - 305 = 320.
    const list = await getList(project.id, '?from=2026-07-01&to=2026-07-31');
    expect(list.totals).toMatchObject({ actual_labor_cost: 280, total_actual_cost: 305, actual_revenue: 285, actual_margin: -20, estimated_margin: -125, variance: 320 });
    // August on: Ann's 08-02 line only: 75, 150; total 100; margin 50.
    const august = await getBreakdown(p.id, '?from=2026-08-01');
    expect(august.task).toMatchObject({ actual_labor_cost: 75, total_actual_cost: 100, actual_revenue: 150, actual_margin: 50 });
  });

  it('explains a member\'s rates on a day: the entry that decided each, and the overrides', async () => {
    const { project, dev, ann, bob } = await rated();
    const explain = async (memberId: string, date: string) =>
      (await h.api.get(`/api/projects/${project.id}/members/${memberId}/rates?date=${date}`).expect(200)).body.body;
    expect(await explain(ann.id, '2026-06-30')).toMatchObject({
      project_id: project.id,
      team_member_id: ann.id,
      date: '2026-06-30',
      rate_unit: 'hour',
      job_role: { id: dev.id, name: dev.name },
      hourly_rate: { amount: 50, source: 'role', effective_from: '1970-01-01' },
      bill_rate: { amount: 80, source: 'role', effective_from: '1970-01-01' },
    });
    expect(await explain(ann.id, '2026-07-15')).toMatchObject({
      hourly_rate: { amount: 60, source: 'member', effective_from: '2026-07-01' },
      bill_rate: { amount: 95, source: 'member', effective_from: '2026-07-01' },
    });
    // The August entry's null cost rate defers to the role's.
    const august = await explain(ann.id, '2026-08-02');
    expect(august).toMatchObject({
      hourly_rate: { amount: 50, source: 'role', effective_from: '1970-01-01' },
      bill_rate: { amount: 100, source: 'member', effective_from: '2026-08-01' },
    });
    expect(august.overrides.map((o: Row) => [o.hourly_rate, o.bill_rate, o.effective_from])).toEqual([
      [60, 95, '2026-07-01'],
      [null, 100, '2026-08-01'],
    ]);
    expect(await explain(bob.id, '2026-07-10')).toMatchObject({ bill_rate: { amount: 0, source: 'none', effective_from: null }, overrides: [] });
  });
});

describe('a day project (section 8 rule 4)', () => {
  async function dayProject(hoursPerDay: number, rates: { hourly_rate: number; bill_rate: number }) {
    const project = await createProject(h.api);
    await h.api.patch(`/api/projects/${project.id}`, { rate_unit: 'day', hours_per_day: hoursPerDay }).expect(200);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, ...rates }]);
    return { project, dev };
  }

  it('costs 8 h at 105.00 a day with 8-hour days at exactly 105.00', async () => {
    const { project, dev } = await dayProject(8, { hourly_rate: 105, bill_rate: 120 });
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 8, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, { hours: 8, logged_at: '2026-11-02T10:00:00Z' });
    const body = await getBreakdown(task.id);
    // 8 x 105 / 8 = 105.00; 8 x 120 / 8 = 120.00; shown hourly 105 / 8 = 13.125, 120 / 8 = 15.
    expect(body.members[0]).toMatchObject({ hourly_rate: 13.125, day_rate: 105, bill_rate: 15, day_bill_rate: 120, estimated_cost: 105, actual_cost: 105, estimated_revenue: 120, actual_revenue: 120 });
    expect(body.task).toMatchObject({ estimated_labor_cost: 105, actual_labor_cost: 105, estimated_revenue: 120, actual_revenue: 120, estimated_margin: 15, actual_margin: 15 });
  });

  it('with 7.5-hour days: 7.5 h at 105 = 105.00, 1 h = 14.00, 11,990 s = 3.33 h = 46.62; hourly shown to 4 decimals', async () => {
    const { project, dev } = await dayProject(7.5, { hourly_rate: 105, bill_rate: 100 });
    const ann = await createMember(h.api, { name: 'Ann' });
    const bob = await createMember(h.api, { name: 'Bob' });
    const cid = await createMember(h.api, { name: 'Cid' });
    for (const m of [ann, bob, cid]) await addToProject(h.api, project.id, m.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 7.5, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, { seconds: 27_000, logged_at: '2026-11-02T10:00:00Z' });
    await logTime(h.api, task.id, bob.id, { seconds: 3600, logged_at: '2026-11-03T10:00:00Z' });
    await logTime(h.api, task.id, cid.id, { seconds: 11_990, logged_at: '2026-11-04T10:00:00Z' });
    const body = await getBreakdown(task.id);
    // Shown: 105 / 7.5 = 14 (cost), 100 / 7.5 = 13.3333 (bill).
    // Ann: 7.5 h: 7.5 x 105 / 7.5 = 105.00, 7.5 x 100 / 7.5 = 100.00 (estimate the same).
    // Bob: 1 h: 105 / 7.5 = 14.00; 100 / 7.5 = 13.333.. -> 13.33.
    // Cid: 11,990 s = 3.3305.. h -> 3.33 h: 3.33 x 105 / 7.5 = 46.62 (not 3.3305 x 14 = 46.63);
    //      3.33 x 100 / 7.5 = 44.40.
    const rates = { hourly_rate: 14, day_rate: 105, bill_rate: 13.3333, day_bill_rate: 100, cost_rate_source: 'role', bill_rate_source: 'role' };
    const line = (hours: number, cost: number, revenue: number, day: string) => ({
      job_role: dev.name,
      hourly_rate: 14,
      day_rate: 105,
      bill_rate: 13.3333,
      day_bill_rate: 100,
      logged_hours: hours,
      actual_cost: cost,
      actual_revenue: revenue,
      first_day: day,
      last_day: day,
    });
    expect(body.members).toEqual([
      expect.objectContaining({ name: 'Ann', ...rates, estimated_hours: 7.5, estimated_cost: 105, estimated_revenue: 100, logged_hours: 7.5, actual_cost: 105, actual_revenue: 100, cost_lines: [line(7.5, 105, 100, '2026-11-02')] }),
      expect.objectContaining({ name: 'Bob', ...rates, estimated_hours: 0, estimated_cost: 0, estimated_revenue: 0, logged_hours: 1, actual_cost: 14, actual_revenue: 13.33, cost_lines: [line(1, 14, 13.33, '2026-11-03')] }),
      expect.objectContaining({ name: 'Cid', ...rates, logged_hours: 3.33, actual_cost: 46.62, actual_revenue: 44.4, cost_lines: [line(3.33, 46.62, 44.4, '2026-11-04')] }),
    ]);
    for (const m of body.members) {
      expect(keys(m)).toEqual([...MEMBER_KEYS, 'job_title_name', 'day_rate', 'day_bill_rate'].sort());
      for (const l of m.cost_lines) expect(keys(l)).toEqual([...LINE_KEYS, 'day_rate', 'day_bill_rate'].sort());
    }
    for (const m of body.grouped_members[0].members) expect(keys(m)).toEqual([...MEMBER_KEYS, 'day_rate', 'day_bill_rate'].sort());
    // Labor: 105 estimated; 105 + 14 + 46.62 = 165.62 actual. Revenue 100; 100 + 13.33 + 44.40 = 157.73.
    // Margins: 100 - 105 = -5; 157.73 - 165.62 = -7.89.
    expect(body.grouped_members[0]).toMatchObject({ estimated_cost: 105, actual_cost: 165.62, estimated_revenue: 100, actual_revenue: 157.73, logged_hours: 11.83 });
    expect(body.task).toMatchObject({ estimated_labor_cost: 105, actual_labor_cost: 165.62, estimated_revenue: 100, actual_revenue: 157.73, estimated_margin: -5, actual_margin: -7.89 });
    const list = await getList(project.id);
    expect(list.project).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
    expect(list.tasks[0]).toMatchObject({ actual_labor_cost: 165.62, actual_revenue: 157.73, actual_margin: -7.89 });
    expect(list.tasks[0].assignees).toEqual([expect.objectContaining({ name: 'Ann', hourly_rate: 14 })]);
    // Explain answers the day rates as entered.
    const explain = (await h.api.get(`/api/projects/${project.id}/members/${bob.id}/rates?date=2026-11-03`).expect(200)).body.body;
    expect(explain).toMatchObject({ rate_unit: 'day', hourly_rate: { amount: 105, source: 'role' }, bill_rate: { amount: 100, source: 'role' } });
  });

  it('refuses a unit change once a rate entry exists (409), and bad units or day lengths (400), changing nothing', async () => {
    const { project } = await dayProject(7.5, { hourly_rate: 105, bill_rate: 100 });
    const conflict = await h.api.patch(`/api/projects/${project.id}`, { hours_per_day: 8 }).expect(409);
    expect(conflict.body.error.code).toBe('CONFLICT');
    const fresh = await createProject(h.api);
    for (const bad of [{ rate_unit: 'week' }, { hours_per_day: 0 }, { hours_per_day: 24.01 }, { hours_per_day: 7.555 }, { hours_per_day: '8' }]) {
      const res = await h.api.patch(`/api/projects/${fresh.id}`, bad).expect(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(Object.keys(bad)[0]);
    }
    expect((await h.api.get(`/api/projects/${fresh.id}`).expect(200)).body.body).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
    expect((await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
  });
});

describe('warnings (section 8 rule 8)', () => {
  it('warns of a cost rate missing on a counting day only, though today resolves; a range without that day is quiet', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    // Dev costs 50 only from 2026-08-01: before it, no entry (none). No bill rate entry anywhere.
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 50 }], '2026-08-01');
    const ann = await createMember(h.api, { name: 'Ann' });
    const zed = await createMember(h.api, { name: 'Zed' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await addToProject(h.api, project.id, zed.id, null);
    // Zed (no role) is assigned to a task with no estimate and logs nothing: nothing counts, no warning.
    const task = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [ann.id] });
    const idle = await createTask(h.api, project.id, { estimated_hours: 0, assignee_ids: [zed.id] });
    await logTime(h.api, task.id, ann.id, { hours: 1, logged_at: '2026-07-15T10:00:00Z' });
    await logTime(h.api, task.id, ann.id, { hours: 1, logged_at: '2026-08-15T10:00:00Z' });
    const body = await getBreakdown(task.id);
    // Ann's July hour costs 0 (none), her August hour 50: actual 50; estimate 4 x 50 = 200.
    expect(body.task).toMatchObject({ actual_labor_cost: 50, estimated_labor_cost: 200, has_missing_rates: true });
    expect(body.warnings).toEqual([{ code: 'MISSING_COST_RATE', team_member_id: ann.id, name: 'Ann' }]);
    expect((await getBreakdown(task.id, '?from=2026-08-01')).warnings).toEqual([]);
    expect((await getBreakdown(idle.id)).warnings).toEqual([]);
    const list = await getList(project.id);
    expect(list.tasks.map((r: Row) => [r.id, r.has_missing_rates])).toEqual([
      [task.id, true],
      [idle.id, false],
    ]);
    expect(list.totals.has_missing_rates).toBe(true);
    const ranged = await getList(project.id, '?from=2026-08-01');
    expect(ranged.totals.has_missing_rates).toBe(false);
  });

  it('counts a member\'s own bill rate as a bill-rate entry of the project; never warns of bills on non-billable tasks', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 50 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const bob = await createMember(h.api, { name: 'Bob' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await addToProject(h.api, project.id, bob.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [ann.id, bob.id] });
    const internal = await createTask(h.api, project.id, { estimated_hours: 2, billable: false, assignee_ids: [ann.id, bob.id] });
    // No bill rate anywhere yet: nothing to say.
    expect((await getBreakdown(task.id)).warnings).toEqual([]);
    await ownRates(project.id, ann.id, { bill_rate: 90, effective_from: '1970-01-01' });
    // Now the project bills: Bob (no bill rate, 1 h of the estimate) is said; Ann bills 90.
    const body = await getBreakdown(task.id);
    expect(body.warnings).toEqual([{ code: 'MISSING_BILL_RATE', team_member_id: bob.id, name: 'Bob' }]);
    expect(byName(body.members, 'Ann')).toMatchObject({ hourly_rate: 50, cost_rate_source: 'role', bill_rate: 90, bill_rate_source: 'member', estimated_revenue: 90 });
    expect((await getBreakdown(internal.id)).warnings).toEqual([]);
  });
});

describe('exports (section 8 rule 7)', () => {
  it('write the revenue and margin columns with the values of the list, in CSV and XLSX', async () => {
    const { project, p } = await rated();
    const csv = parseCsv((await h.api.get(`/api/project-finance/project/${project.id}/export?format=csv`).expect(200)).text);
    const header = csv[0] as string[];
    const row = csv.find((r) => r.includes(p.id) || r.includes('P')) as string[];
    const cell = (name: string) => row[header.indexOf(name)];
    // P's row is its subtree: 500, 595, -125, 115; P has a missing rate (Bob).
    expect([cell('Estimated revenue (USD)'), cell('Actual revenue (USD)'), cell('Estimated margin (USD)'), cell('Actual margin (USD)'), cell('Missing rates')]).toEqual([
      '500',
      '595',
      '-125',
      '115',
      'yes',
    ]);
    const lines = parseCsv((await h.api.get(`/api/project-finance/project/${project.id}/export?format=csv&sheet=cost_lines`).expect(200)).text);
    const lineHeader = lines[0] as string[];
    const revenue = lines.slice(1).map((r) => [r[lineHeader.indexOf('Bill rate (USD)')], r[lineHeader.indexOf('Actual revenue (USD)')]]);
    // Ann's three P lines (80: 160, 95: 285, 100: 150), Bob's (0: 0), Ann's C line (95, earning 0).
    expect(revenue.sort()).toEqual(
      [
        ['80', '160'],
        ['95', '285'],
        ['100', '150'],
        ['0', '0'],
        ['95', '0'],
      ].sort(),
    );
    const xlsx = await h.api.get(`/api/project-finance/project/${project.id}/export?format=xlsx`).buffer(true).parse(binary).expect(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(xlsx.body as unknown as ExcelJS.Buffer);
    const sheet = book.getWorksheet('Finance') as ExcelJS.Worksheet;
    const names = (sheet.getRow(1).values as unknown[]).map(String);
    const values = sheet.getRow(2).values as unknown[];
    const xcell = (name: string) => values[names.indexOf(name)];
    // The sheet's headers carry no currency (it is in each cell's number format).
    expect([xcell('Estimated revenue'), xcell('Actual revenue'), xcell('Estimated margin'), xcell('Actual margin'), xcell('Missing rates')]).toEqual([500, 595, -125, 115, 'yes']);
    expect(sheet.getRow(2).getCell(names.indexOf('Actual margin')).numFmt).toContain('"USD"');
  });
});

describe('the rate-card preview (section 8 rule 7, section 4)', () => {
  it('answers the four figures before and after, writes nothing, and the PUT then answers exactly its after', async () => {
    const { project, dev, qa, p, c } = await rated();
    const change = {
      roles: [
        { job_role_id: dev.id, hourly_rate: 55, bill_rate: 90 },
        { job_role_id: qa.id, hourly_rate: 40, bill_rate: 70 },
      ],
      effective_from: '2026-08-01',
    };
    const listBefore = await getList(project.id);
    const historyBefore = (await h.api.get(`/api/projects/${project.id}/rate-card/history`).expect(200)).body.body;
    const preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, change).expect(200)).body.body;
    // From 08-01: Ann's August line costs 1.5 x 55 = 82.5 (her own entry's cost is null) and still bills
    // her own 100: 150. Today Ann costs 55 (P: 5 x 55 = 275; C: 3 x 55 = 165), bills 100 (500).
    // Bob today: 40, bills 70: 5 x 70 = 350. Past lines before 08-01 unchanged.
    // P own after: labor 275 + 200 = 475, 100 + 180 + 82.5 + 40 = 402.5; totals 500, 427.5;
    //   revenue 500 + 350 = 850, 595; margins 350, 167.5.
    // C after: 165, 60; totals 165, 60; revenue 0; margins -165, -60.
    const figures = (e: number[]) => ({
      estimated_labor_cost: e[0],
      actual_labor_cost: e[1],
      total_estimated_cost: e[2],
      total_actual_cost: e[3],
      estimated_revenue: e[4],
      actual_revenue: e[5],
      estimated_margin: e[6],
      actual_margin: e[7],
    });
    const tasks = [...preview.tasks].sort((a: Row, b: Row) => String(a.name).localeCompare(String(b.name)));
    expect(tasks).toEqual([
      { id: c.id, name: 'C', before: figures([150, 60, 150, 60, 0, 0, -150, -60]), after: figures([165, 60, 165, 60, 0, 0, -165, -60]) },
      { id: p.id, name: 'P', before: figures([450, 395, 475, 420, 500, 595, 25, 175]), after: figures([475, 402.5, 500, 427.5, 850, 595, 350, 167.5]) },
    ]);
    // Project totals (the unfiltered list's): before 600, 455, 625, 480, 500, 595, -125, 115;
    // after 640, 462.5, 665, 487.5, 850, 595, 850 - 665 = 185, 595 - 487.5 = 107.5.
    const totals = (f: ReturnType<typeof figures>) => ({ estimated_hours: 13, logged_hours: 8.5, fixed_cost: 25, ...f });
    expect(preview.project_totals).toEqual({
      before: totals(figures([600, 455, 625, 480, 500, 595, -125, 115])),
      after: totals(figures([640, 462.5, 665, 487.5, 850, 595, 185, 107.5])),
    });
    // Nothing written.
    expect((await h.api.get(`/api/projects/${project.id}/rate-card/history`).expect(200)).body.body).toEqual(historyBefore);
    expect(await getList(project.id)).toEqual(listBefore);
    await h.api.put(`/api/projects/${project.id}/rate-card`, change).expect(200);
    expect((await getBreakdown(p.id)).task).toMatchObject(figures([475, 402.5, 500, 427.5, 850, 595, 350, 167.5]));
    expect((await getBreakdown(c.id)).task).toMatchObject(figures([165, 60, 165, 60, 0, 0, -165, -60]));
    expect((await getList(project.id)).totals).toMatchObject(figures([640, 462.5, 665, 487.5, 850, 595, 185, 107.5]));
  });
});

describe('never stale (section 3b rule 7 for the figures of section 8)', () => {
  it('follows an override, a back-dated card entry and a back-dated override, on the breakdown and the cached list', async () => {
    const { project, dev, qa, ann, p } = await rated();
    const read = async () => {
      const breakdownBody = await getBreakdown(p.id);
      await getList(project.id); // once to fill any cache, once from it
      return { breakdown: breakdownBody, list: await getList(project.id) };
    };
    let seen = await read();
    expect(seen.list.totals).toMatchObject({ estimated_revenue: 500, actual_revenue: 595, estimated_margin: -125, actual_margin: 115, has_missing_rates: true });

    // 1. Ann's August entry now bills 110: her estimate 5 x 110 = 550, her August line 1.5 x 110 = 165.
    //    P: revenue 550 / 160 + 285 + 165 = 610; margins 550 - 475 = 75, 610 - 420 = 190.
    //    List (subtree): margins 550 - 625 = -75, 610 - 480 = 130.
    await ownRates(project.id, ann.id, { hourly_rate: null, bill_rate: 110, effective_from: '2026-08-01' });
    seen = await read();
    expect(seen.breakdown.task).toMatchObject({ estimated_revenue: 550, actual_revenue: 610, estimated_margin: 75, actual_margin: 190 });
    expect(seen.list.totals).toMatchObject({ estimated_revenue: 550, actual_revenue: 610, estimated_margin: -75, actual_margin: 130 });

    // 2. A back-dated card from 2026-06-01: Dev bills 85, QA still none. Ann's 06-30 line bills 2 x 85 = 170.
    //    P actual revenue 170 + 285 + 165 = 620; margin 620 - 420 = 200; list 620 - 480 = 140.
    await card(project.id, [
      { job_role_id: dev.id, hourly_rate: 50, bill_rate: 85 },
      { job_role_id: qa.id, hourly_rate: 40, bill_rate: null },
    ], '2026-06-01');
    seen = await read();
    expect(seen.breakdown.task).toMatchObject({ actual_revenue: 620, actual_margin: 200 });
    expect(seen.list.totals).toMatchObject({ actual_revenue: 620, actual_margin: 140 });

    // 3. A back-dated own rate from 2026-06-01 (cost 45, bill null) replaces both later entries: every
    //    day of Ann's is (Dev, 45, 85): one line, 6.5 h, 292.5, 552.5, 06-30 to 08-02.
    //    P: labor 5 x 45 + 200 = 425, 292.5 + 40 = 332.5; totals 450, 357.5; revenue 5 x 85 = 425, 552.5;
    //    margins -25, 195. C: 3 x 45 = 135, 45. List: totals 585, 402.5; margins 425 - 585 = -160,
    //    552.5 - 402.5 = 150.
    await ownRates(project.id, ann.id, { hourly_rate: 45, bill_rate: null, effective_from: '2026-06-01' });
    seen = await read();
    expect(byName(seen.breakdown.members, 'Ann')).toMatchObject({
      hourly_rate: 45,
      cost_rate_source: 'member',
      bill_rate: 85,
      bill_rate_source: 'role',
      cost_lines: [{ job_role: dev.name, hourly_rate: 45, bill_rate: 85, logged_hours: 6.5, actual_cost: 292.5, actual_revenue: 552.5, first_day: '2026-06-30', last_day: '2026-08-02' }],
    });
    expect(seen.breakdown.task).toMatchObject({
      estimated_labor_cost: 425,
      actual_labor_cost: 332.5,
      total_estimated_cost: 450,
      total_actual_cost: 357.5,
      estimated_revenue: 425,
      actual_revenue: 552.5,
      estimated_margin: -25,
      actual_margin: 195,
    });
    expect(seen.list.totals).toMatchObject({ total_estimated_cost: 585, total_actual_cost: 402.5, estimated_margin: -160, actual_margin: 150, has_missing_rates: true });

    // 4. QA bills 70 from 2026-06-01: Bob's warning goes (his 07-10 hour earns 70, his estimate 5 x 70 = 350).
    await card(project.id, [
      { job_role_id: dev.id, hourly_rate: 50, bill_rate: 85 },
      { job_role_id: qa.id, hourly_rate: 40, bill_rate: 70 },
    ], '2026-06-01');
    seen = await read();
    expect(seen.breakdown.warnings).toEqual([]);
    expect(seen.breakdown.task).toMatchObject({ estimated_revenue: 775, actual_revenue: 622.5, has_missing_rates: false });
    expect(seen.list.tasks[0].has_missing_rates).toBe(false);
    expect(seen.list.totals).toMatchObject({ estimated_revenue: 775, actual_revenue: 622.5, has_missing_rates: false });
  });
});

describe('more edges: zones, currencies, roles, validation', () => {
  it("dates an own rate by the project's zone: a log at 02:00Z on the override's first day is the day before in New York", async () => {
    const project = await createProject(h.api, { time_zone: 'America/New_York' });
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await ownRates(project.id, ann.id, { hourly_rate: 70, bill_rate: 120, effective_from: '2026-07-01' });
    const task = await createTask(h.api, project.id, { estimated_hours: 0 });
    // 2026-07-01T02:00Z is 2026-06-30 22:00 in New York (EDT): the role's 50 / 80. 2026-07-01T05:00Z is
    // 01:00 on 07-01: Ann's 70 / 120.
    await logTime(h.api, task.id, ann.id, { hours: 1, logged_at: '2026-07-01T02:00:00Z' });
    await logTime(h.api, task.id, ann.id, { hours: 1, logged_at: '2026-07-01T05:00:00Z' });
    const body = await getBreakdown(task.id);
    expect(body.members[0].cost_lines).toEqual([
      { job_role: dev.name, hourly_rate: 50, bill_rate: 80, logged_hours: 1, actual_cost: 50, actual_revenue: 80, first_day: '2026-06-30', last_day: '2026-06-30' },
      { job_role: dev.name, hourly_rate: 70, bill_rate: 120, logged_hours: 1, actual_cost: 70, actual_revenue: 120, first_day: '2026-07-01', last_day: '2026-07-01' },
    ]);
    // No estimate: 0 estimated; actual 120 cost, 200 revenue, margin 80.
    expect(body.task).toMatchObject({ estimated_revenue: 0, actual_labor_cost: 120, actual_revenue: 200, estimated_margin: 0, actual_margin: 80 });
    expect((await getBreakdown(task.id, '?to=2026-06-30')).task).toMatchObject({ actual_labor_cost: 50, actual_revenue: 80, actual_margin: 30 });
  });

  it('rounds day amounts half away from zero in the currency: 1 h at 105/day of 8 h = 13.13; JPY 10000/day of 7.5 h', async () => {
    const usd = await createProject(h.api);
    await h.api.patch(`/api/projects/${usd.id}`, { rate_unit: 'day', hours_per_day: 8 }).expect(200);
    const dev = await createJobRole(h.api);
    await card(usd.id, [{ job_role_id: dev.id, hourly_rate: 105, bill_rate: 105 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, usd.id, ann.id, dev.id);
    const task = await createTask(h.api, usd.id, { estimated_hours: 1, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, { hours: 1, logged_at: '2026-11-02T10:00:00Z' });
    // 1 x 105 / 8 = 13.125 -> 13.13 (half away from zero), cost and revenue alike; margin 0.
    expect((await getBreakdown(task.id)).task).toMatchObject({ estimated_labor_cost: 13.13, actual_labor_cost: 13.13, estimated_revenue: 13.13, actual_revenue: 13.13, estimated_margin: 0, actual_margin: 0 });

    const jpy = await createProject(h.api, { currency: 'JPY' });
    await h.api.patch(`/api/projects/${jpy.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
    await card(jpy.id, [{ job_role_id: dev.id, hourly_rate: 10000, bill_rate: 15000 }]);
    await addToProject(h.api, jpy.id, ann.id, dev.id);
    const yen = await createTask(h.api, jpy.id, { estimated_hours: 10, fixed_cost: 1000, assignee_ids: [ann.id] });
    await logTime(h.api, yen.id, ann.id, { hours: 1, logged_at: '2026-11-02T10:00:00Z' });
    const body = await getBreakdown(yen.id);
    // Shown hourly: 10000 / 7.5 = 1333.3333, 15000 / 7.5 = 2000. Estimate 10 h: 10 x 10000 / 7.5 = 13333.33 -> 13333;
    // 10 x 15000 / 7.5 = 20000. Actual 1 h: 1333.33 -> 1333; 2000. Margins: 20000 - (13333 + 1000) = 5667;
    // 2000 - (1333 + 1000) = -333.
    expect(body.members[0]).toMatchObject({ hourly_rate: 1333.3333, day_rate: 10000, bill_rate: 2000, day_bill_rate: 15000, estimated_cost: 13333, actual_cost: 1333, estimated_revenue: 20000, actual_revenue: 2000 });
    expect(body.task).toMatchObject({ currency: 'JPY', estimated_margin: 5667, actual_margin: -333 });
    // A JPY bill rate with decimals is refused, naming the field; nothing changes.
    const bad = await h.api.put(`/api/projects/${jpy.id}/members/${ann.id}/rates`, { bill_rate: 100.5, effective_from: '2026-01-01' }).expect(400);
    expect(JSON.stringify(bad.body.error.details)).toContain('bill_rate');
    expect((await getBreakdown(yen.id)).members[0]).toMatchObject({ bill_rate_source: 'role', day_bill_rate: 15000 });
  });

  it('splits the lines where the role changes though an own rate holds the amounts; own rates beat a member without a role', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    const lead = await createJobRole(h.api);
    await card(project.id, [
      { job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 },
      { job_role_id: lead.id, hourly_rate: 90, bill_rate: 150 },
    ]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const nora = await createMember(h.api, { name: 'Nora' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await h.api.put(`/api/projects/${project.id}/members/${ann.id}`, { job_role_id: lead.id, effective_from: '2026-07-01' }).expect(200);
    await ownRates(project.id, ann.id, { hourly_rate: 60, bill_rate: 100, effective_from: '1970-01-01' });
    // Nora has no role but rates of her own: no warning.
    await addToProject(h.api, project.id, nora.id, null);
    await ownRates(project.id, nora.id, { hourly_rate: 30, bill_rate: 45, effective_from: '1970-01-01' });
    const task = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [ann.id, nora.id] });
    await logTime(h.api, task.id, ann.id, { hours: 1, logged_at: '2026-06-15T10:00:00Z' });
    await logTime(h.api, task.id, ann.id, { hours: 2, logged_at: '2026-07-15T10:00:00Z' });
    await logTime(h.api, task.id, nora.id, { hours: 1, logged_at: '2026-07-15T10:00:00Z' });
    const body = await getBreakdown(task.id);
    // Ann: (Dev, 60, 100) 1 h: 60, 100; (Lead, 60, 100) 2 h: 120, 200. Estimate 2 h: 120, 200.
    expect(byName(body.members, 'Ann')).toMatchObject({
      job_title_name: lead.name,
      hourly_rate: 60,
      bill_rate: 100,
      cost_rate_source: 'member',
      bill_rate_source: 'member',
      estimated_cost: 120,
      estimated_revenue: 200,
      actual_cost: 180,
      actual_revenue: 300,
      cost_lines: [
        expect.objectContaining({ job_role: dev.name, hourly_rate: 60, bill_rate: 100, logged_hours: 1, actual_cost: 60, actual_revenue: 100 }),
        expect.objectContaining({ job_role: lead.name, hourly_rate: 60, bill_rate: 100, logged_hours: 2, actual_cost: 120, actual_revenue: 200 }),
      ],
    });
    // Nora: Unassigned, 2 h x 30 = 60, x 45 = 90; 1 h: 30, 45.
    expect(byName(body.members, 'Nora')).toMatchObject({ job_title_name: 'Unassigned', hourly_rate: 30, bill_rate: 45, cost_rate_source: 'member', bill_rate_source: 'member', estimated_cost: 60, estimated_revenue: 90, actual_cost: 30, actual_revenue: 45 });
    expect(body.grouped_members.map((g: Row) => g.jobRole)).toEqual([lead.name, 'Unassigned']);
    expect(body.warnings).toEqual([]);
    // Margins: (200 + 90) - (120 + 60) = 110; (300 + 45) - (180 + 30) = 135.
    expect(body.task).toMatchObject({ estimated_margin: 110, actual_margin: 135, has_missing_rates: false });
  });

  it('explains today by default, and 404s a non-member; refuses bad override bodies, changing nothing', async () => {
    const { project, ann } = await rated();
    const today = (await h.api.get(`/api/projects/${project.id}/members/${ann.id}/rates`).expect(200)).body.body;
    expect(today).toMatchObject({ hourly_rate: { amount: 50, source: 'role' }, bill_rate: { amount: 100, source: 'member', effective_from: '2026-08-01' } });
    expect(today.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const stranger = await createMember(h.api, { name: 'Stranger' });
    await h.api.get(`/api/projects/${project.id}/members/${stranger.id}/rates`).expect(404);
    await h.api.put(`/api/projects/${project.id}/members/${stranger.id}/rates`, { hourly_rate: 10 }).expect(404);
    const before = (await h.api.get(`/api/projects/${project.id}/members/${ann.id}/rates?date=2026-08-02`).expect(200)).body.body;
    for (const [body, field] of [
      [{}, null],
      [{ effective_from: '2026-01-01' }, null],
      [{ hourly_rate: -1 }, 'hourly_rate'],
      [{ bill_rate: 10.005 }, 'bill_rate'],
      [{ bill_rate: '10' }, 'bill_rate'],
      [{ hourly_rate: 10, effective_from: '2026-02-30' }, 'effective_from'],
      [{ hourly_rate: 10, cost_rate: 5 }, null],
    ] as [Row, string | null][]) {
      const res = await h.api.put(`/api/projects/${project.id}/members/${ann.id}/rates`, body).expect(400);
      if (field) expect({ body, paths: res.body.error.details.map((d: { path: string }) => d.path) }).toEqual({ body, paths: expect.arrayContaining([field]) });
    }
    const badCard = await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: ann.id, hourly_rate: 1, bill_rate: -2 }] }).expect(400);
    expect(JSON.stringify(badCard.body.error.details)).toContain('bill_rate');
    expect((await h.api.get(`/api/projects/${project.id}/members/${ann.id}/rates?date=2026-08-02`).expect(200)).body.body).toEqual(before);
  });

  it('previews a day project in its entered rates, and the after is what the PUT answers', async () => {
    const project = await createProject(h.api);
    await h.api.patch(`/api/projects/${project.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 100, bill_rate: 150 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 7.5, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, { hours: 3, logged_at: '2026-11-02T10:00:00Z' });
    // Before: estimate 7.5 h: 100, 150; actual 3 h: 3 x 100 / 7.5 = 40, 3 x 150 / 7.5 = 60. Margins 50, 20.
    // After (105 / 112.5 per day, from the beginning): 105, 112.5; 3 x 105 / 7.5 = 42, 3 x 112.5 / 7.5 = 45.
    // Margins 7.5, 3.
    const change = { roles: [{ job_role_id: dev.id, hourly_rate: 105, bill_rate: 112.5 }], effective_from: '1970-01-01' };
    const preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, change).expect(200)).body.body;
    const before = { estimated_labor_cost: 100, actual_labor_cost: 40, total_estimated_cost: 100, total_actual_cost: 40, estimated_revenue: 150, actual_revenue: 60, estimated_margin: 50, actual_margin: 20 };
    const after = { estimated_labor_cost: 105, actual_labor_cost: 42, total_estimated_cost: 105, total_actual_cost: 42, estimated_revenue: 112.5, actual_revenue: 45, estimated_margin: 7.5, actual_margin: 3 };
    expect(preview.tasks).toEqual([{ id: task.id, name: task.name, before, after }]);
    expect(preview.project_totals.after).toMatchObject(after);
    await h.api.put(`/api/projects/${project.id}/rate-card`, change).expect(200);
    expect((await getBreakdown(task.id)).task).toMatchObject(after);
    expect((await getBreakdown(task.id)).members[0]).toMatchObject({ hourly_rate: 14, day_rate: 105, bill_rate: 15, day_bill_rate: 112.5 });
  });
});

describe("a day project's exports (section 8 rule 7: the exports gain the same columns)", () => {
  it('carry the entered day rates of each cost line beside the rates shown per hour, in CSV and XLSX', async () => {
    const project = await createProject(h.api);
    await h.api.patch(`/api/projects/${project.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 105, bill_rate: 100 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 7.5, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, { hours: 7.5, logged_at: '2026-11-02T10:00:00Z' });
    // As the breakdown's line: 14 and 13.3333 an hour shown, 105 and 100 a day entered; 7.5 h: 105.00, 100.00.
    const csv = parseCsv((await h.api.get(`/api/project-finance/project/${project.id}/export?format=csv&sheet=cost_lines`).expect(200)).text);
    const header = csv[0] as string[];
    const row = csv[1] as string[];
    const cell = (name: string) => row[header.indexOf(name)];
    expect(header.slice(0, 12)).toEqual(['Task', 'Task id', 'Member', 'Member id', 'Job role', 'Hourly rate (USD)', 'Logged hours', 'Actual cost (USD)', 'First day', 'Last day', 'Bill rate (USD)', 'Actual revenue (USD)']);
    expect([cell('Hourly rate (USD)'), cell('Bill rate (USD)'), cell('Day rate (USD)'), cell('Day bill rate (USD)'), cell('Actual cost (USD)'), cell('Actual revenue (USD)')]).toEqual([
      '14',
      '13.3333',
      '105',
      '100',
      '105',
      '100',
    ]);
    const xlsx = await h.api.get(`/api/project-finance/project/${project.id}/export?format=xlsx&sheet=cost_lines`).buffer(true).parse(binary).expect(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(xlsx.body as unknown as ExcelJS.Buffer);
    const sheet = book.getWorksheet('Cost lines') as ExcelJS.Worksheet;
    const names = (sheet.getRow(1).values as unknown[]).map(String);
    const values = sheet.getRow(2).values as unknown[];
    const xcell = (name: string) => values[names.indexOf(name)];
    expect([xcell('Hourly rate'), xcell('Bill rate'), xcell('Day rate'), xcell('Day bill rate')]).toEqual([14, 13.3333, 105, 100]);
    // The rate shown per hour is displayed to its 4 decimals, not as 13.33.
    expect(sheet.getRow(2).getCell(names.indexOf('Bill rate')).numFmt).toContain('0.0000');
  });

  it('keeps an hour project\'s cost-line columns as they were', async () => {
    const { project } = await rated();
    const csv = parseCsv((await h.api.get(`/api/project-finance/project/${project.id}/export?format=csv&sheet=cost_lines`).expect(200)).text);
    expect(csv[0]).toEqual(['Task', 'Task id', 'Member', 'Member id', 'Job role', 'Hourly rate (USD)', 'Logged hours', 'Actual cost (USD)', 'First day', 'Last day', 'Bill rate (USD)', 'Actual revenue (USD)']);
  });
});

describe('more never-stale and preview cases', () => {
  it('lists in the preview a task whose revenue alone would change, and no task when nothing would', async () => {
    const { project, dev, qa, p } = await rated();
    // Only QA's bill rate moves (none -> 70, from the beginning): Bob's estimate earns 5 x 70 = 350 and his
    // 07-10 hour 70. P's costs stay; revenue 500 -> 850 estimated, 595 -> 665 actual; margins 25 -> 375,
    // 175 -> 245. C (non-billable, no QA) does not change.
    const change = {
      roles: [
        { job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 },
        { job_role_id: qa.id, hourly_rate: 40, bill_rate: 70 },
      ],
      effective_from: '1970-01-01',
    };
    const preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, change).expect(200)).body.body;
    expect(preview.tasks).toEqual([
      {
        id: p.id,
        name: 'P',
        before: { estimated_labor_cost: 450, actual_labor_cost: 395, total_estimated_cost: 475, total_actual_cost: 420, estimated_revenue: 500, actual_revenue: 595, estimated_margin: 25, actual_margin: 175 },
        after: { estimated_labor_cost: 450, actual_labor_cost: 395, total_estimated_cost: 475, total_actual_cost: 420, estimated_revenue: 850, actual_revenue: 665, estimated_margin: 375, actual_margin: 245 },
      },
    ]);
    // The same card as today's: nothing would change.
    const same = {
      roles: [
        { job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 },
        { job_role_id: qa.id, hourly_rate: 40, bill_rate: null },
      ],
      effective_from: '1970-01-01',
    };
    const nothing = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, same).expect(200)).body.body;
    expect(nothing.tasks).toEqual([]);
    expect(nothing.project_totals.after).toEqual(nothing.project_totals.before);
  });

  it('leaves today alone with an own rate dated tomorrow, and a role left out of a card has no rate from its day', async () => {
    const { project, qa, ann, bob, p } = await rated();
    const tomorrow = new Date(Date.now() + 36 * 3600 * 1000).toISOString().slice(0, 10);
    await ownRates(project.id, ann.id, { hourly_rate: 999, bill_rate: 999, effective_from: tomorrow });
    expect(byName((await getBreakdown(p.id)).members, 'Ann')).toMatchObject({ hourly_rate: 50, cost_rate_source: 'role', bill_rate: 100, bill_rate_source: 'member', estimated_cost: 250 });
    // A card from 2026-09-01 with QA only: Dev has no rate from then. Ann's own entry of 08-01 still bills
    // 100 but defers its cost to the role: none today. Her estimate costs 0; her lines are all before 09-01.
    await card(project.id, [{ job_role_id: qa.id, hourly_rate: 40, bill_rate: null }], '2026-09-01');
    const body = await getBreakdown(p.id);
    expect(byName(body.members, 'Ann')).toMatchObject({ hourly_rate: 0, cost_rate_source: 'none', estimated_cost: 0, actual_cost: 355, estimated_revenue: 500 });
    expect(body.warnings).toEqual([
      { code: 'MISSING_COST_RATE', team_member_id: ann.id, name: 'Ann' },
      { code: 'MISSING_BILL_RATE', team_member_id: bob.id, name: 'Bob' },
    ]);
    // P: labor 0 + 200 = 200 estimated; total 225; margin 500 - 225 = 275.
    expect(body.task).toMatchObject({ estimated_labor_cost: 200, total_estimated_cost: 225, estimated_margin: 275 });
  });

  it("follows a task turned non-billable, a deleted log and a child's missing rate, on the cached list", async () => {
    const { project, p, c } = await rated();
    const stranger = await createMember(h.api, { name: 'Zoe' });
    await addToProject(h.api, project.id, stranger.id, null);
    await getList(project.id);
    await getList(project.id);
    // Zoe (no role, no rate) logs 30 minutes on C: a cost rate missing on a counting day. C is non-billable:
    // no bill warning. P's own breakdown says nothing of her; its subtree and its row do.
    const log = await logTime(h.api, c.id, stranger.id, { seconds: 1800, logged_at: '2026-07-21T10:00:00Z' });
    expect((await getBreakdown(c.id)).warnings).toEqual([{ code: 'MISSING_COST_RATE', team_member_id: stranger.id, name: 'Zoe' }]);
    expect((await getBreakdown(p.id, '?include_subtasks=true')).warnings).toEqual(
      expect.arrayContaining([{ code: 'MISSING_COST_RATE', team_member_id: stranger.id, name: 'Zoe' }]),
    );
    await getList(project.id);
    const children = await getList(project.id, `?parent_task_id=${p.id}`);
    expect(children.tasks[0]).toMatchObject({ id: c.id, has_missing_rates: true, logged_hours: 1.5 });
    await h.api.delete(`/api/time-logs/${log.id}`).expect((res) => expect([200, 204]).toContain(res.status));
    expect((await getBreakdown(c.id)).warnings).toEqual([]);
    expect((await getList(project.id, `?parent_task_id=${p.id}`)).tasks[0]).toMatchObject({ has_missing_rates: false, logged_hours: 1 });

    // P turned non-billable: no revenue anywhere, no bill warning; margins minus the costs: -625, -480.
    await getList(project.id);
    await h.api.patch(`/api/tasks/${p.id}`, { billable: false }).expect(200);
    const own = await getBreakdown(p.id);
    expect(own.warnings).toEqual([]);
    expect(own.task).toMatchObject({ estimated_revenue: 0, actual_revenue: 0, estimated_margin: -475, actual_margin: -420, has_missing_rates: false });
    const list = await getList(project.id);
    expect(list.totals).toMatchObject({ estimated_revenue: 0, actual_revenue: 0, estimated_margin: -625, actual_margin: -480, has_missing_rates: false });
  });
});

describe('access, the unit held by an own rate, explain exactly', () => {
  it('lets a viewer explain and read, and only an admin write own rates; an own rate alone holds the unit (409)', async () => {
    const { project, ann } = await rated();
    const token = async (role: string) => h.api.as((await h.api.post('/api/tokens', { name: `t-${role}`, role }).expect(201)).body.body.token as string);
    const viewer = await token('viewer');
    const editor = await token('editor');
    const explained = (await viewer.get(`/api/projects/${project.id}/members/${ann.id}/rates?date=2026-07-15`).expect(200)).body.body;
    expect(keys(explained)).toEqual(['bill_rate', 'date', 'hourly_rate', 'job_role', 'overrides', 'project_id', 'rate_unit', 'team_member_id']);
    expect(keys(explained.hourly_rate)).toEqual(['amount', 'effective_from', 'source']);
    for (const o of explained.overrides) expect(keys(o)).toEqual(['bill_rate', 'effective_from', 'hourly_rate', 'written_at', 'written_by']);
    await viewer.put(`/api/projects/${project.id}/members/${ann.id}/rates`, { hourly_rate: 1 }).expect(403);
    await editor.put(`/api/projects/${project.id}/members/${ann.id}/rates`, { hourly_rate: 1 }).expect(403);
    await editor.post(`/api/projects/${project.id}/rate-card/preview`, { roles: [] }).expect(403);
    expect((await h.api.get(`/api/projects/${project.id}/members/${ann.id}/rates?date=2026-07-15`).expect(200)).body.body).toEqual(explained);

    // A project without a card but with one own rate: its unit is held.
    const bare = await createProject(h.api);
    const dev = await createJobRole(h.api);
    const cid = await createMember(h.api, { name: 'Cid' });
    await addToProject(h.api, bare.id, cid.id, dev.id);
    await ownRates(bare.id, cid.id, { bill_rate: 10, effective_from: '2026-01-01' });
    const held = await h.api.patch(`/api/projects/${bare.id}`, { rate_unit: 'day' }).expect(409);
    expect(held.body.error.code).toBe('CONFLICT');
    expect((await h.api.get(`/api/projects/${bare.id}`).expect(200)).body.body).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
  });

  it('marks each group of the list by whether it holds a task with a missing rate', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const zoe = await createMember(h.api, { name: 'Zoe' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await addToProject(h.api, project.id, zoe.id, null);
    const done = await createTask(h.api, project.id, { estimated_hours: 2, status: 'done', assignee_ids: [ann.id] });
    const open = await createTask(h.api, project.id, { estimated_hours: 2, status: 'open', assignee_ids: [zoe.id] });
    // done: 2 x 50 = 100, revenue 160, margin 60. open: Zoe without rates: 0, 0, margin 0, missing rates.
    const list = await getList(project.id, '?group_by=status');
    const group = (name: string) => list.groups.find((g: Row) => g.group_name === name);
    expect(group('done')).toMatchObject({ task_ids: [done.id], estimated_revenue: 160, estimated_margin: 60, has_missing_rates: false });
    expect(group('open')).toMatchObject({ task_ids: [open.id], estimated_revenue: 0, estimated_margin: 0, has_missing_rates: true });
    expect(list.totals).toMatchObject({ estimated_revenue: 160, estimated_margin: 60, has_missing_rates: true });
  });
});

describe('last edges: a zero share of the estimate, an own day rate mid-way, the split in a day project', () => {
  it('says nothing of a member whose share of the estimate is 0 and who logged nothing', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 50 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const zoe = await createMember(h.api, { name: 'Zoe' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await addToProject(h.api, project.id, zoe.id, null);
    // 0.01 h over Ann and Zoe: 0.01 and 0 (the remainder to the earlier member). Zoe has no estimate, no time.
    const task = await createTask(h.api, project.id, { estimated_hours: 0.01, assignee_ids: [ann.id, zoe.id] });
    const body = await getBreakdown(task.id);
    expect(body.members.map((m: Row) => [m.name, m.estimated_hours])).toEqual([
      ['Ann', 0.01],
      ['Zoe', 0],
    ]);
    expect(body.warnings).toEqual([]);
    expect(body.task.has_missing_rates).toBe(false);
  });

  it('splits a 10 h estimate 3.34 / 3.33 / 3.33 and bills each share per day on its own; an own day rate mid-way splits the lines', async () => {
    const project = await createProject(h.api);
    await h.api.patch(`/api/projects/${project.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 90, bill_rate: 100 }]);
    const [ann, ben, cal] = [await createMember(h.api, { name: 'Ann' }), await createMember(h.api, { name: 'Ben' }), await createMember(h.api, { name: 'Cal' })];
    for (const m of [ann, ben, cal]) await addToProject(h.api, project.id, m.id, dev.id);
    await ownRates(project.id, ann.id, { hourly_rate: 120, effective_from: '2026-07-01' });
    const task = await createTask(h.api, project.id, { estimated_hours: 10, assignee_ids: [ann.id, ben.id, cal.id] });
    await logTime(h.api, task.id, ann.id, { hours: 3, logged_at: '2026-06-30T10:00:00Z' });
    await logTime(h.api, task.id, ann.id, { hours: 3, logged_at: '2026-07-01T10:00:00Z' });
    const body = await getBreakdown(task.id);
    // Revenue (100/day): Ann 3.34 x 100 / 7.5 = 44.5333 -> 44.53; Ben, Cal 3.33 x 100 / 7.5 = 44.40. Sum 133.33.
    // Cost: Ann today 120/day (own): 3.34 x 120 / 7.5 = 53.44; Ben, Cal 3.33 x 90 / 7.5 = 39.96. Sum 133.36.
    expect(body.members.map((m: Row) => [m.name, m.estimated_hours, m.estimated_cost, m.estimated_revenue])).toEqual([
      ['Ann', 3.34, 53.44, 44.53],
      ['Ben', 3.33, 39.96, 44.4],
      ['Cal', 3.33, 39.96, 44.4],
    ]);
    // Ann's lines: 06-30 at 90/100 a day: 3 x 90 / 7.5 = 36, 3 x 100 / 7.5 = 40; 07-01 at 120/100: 48, 40.
    expect(byName(body.members, 'Ann')).toMatchObject({
      hourly_rate: 16,
      day_rate: 120,
      bill_rate: 13.3333,
      day_bill_rate: 100,
      cost_rate_source: 'member',
      bill_rate_source: 'role',
      cost_lines: [
        expect.objectContaining({ hourly_rate: 12, day_rate: 90, bill_rate: 13.3333, day_bill_rate: 100, logged_hours: 3, actual_cost: 36, actual_revenue: 40, first_day: '2026-06-30' }),
        expect.objectContaining({ hourly_rate: 16, day_rate: 120, bill_rate: 13.3333, day_bill_rate: 100, logged_hours: 3, actual_cost: 48, actual_revenue: 40, first_day: '2026-07-01' }),
      ],
    });
    // Task: 133.36 / 84 cost, 133.33 / 80 revenue; margins -0.03, -4.
    expect(body.task).toMatchObject({ estimated_labor_cost: 133.36, actual_labor_cost: 84, estimated_revenue: 133.33, actual_revenue: 80, estimated_margin: -0.03, actual_margin: -4 });
  });
});

describe('a bill rate of 0 is a rate, not a missing one', () => {
  it('warns only of the member whose bill rate resolves to none; the export Total row carries the sums', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    const qa = await createJobRole(h.api);
    await card(project.id, [
      { job_role_id: dev.id, hourly_rate: 50, bill_rate: 0 },
      { job_role_id: qa.id, hourly_rate: 40, bill_rate: null },
    ]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const bob = await createMember(h.api, { name: 'Bob' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await addToProject(h.api, project.id, bob.id, qa.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 2, fixed_cost: 10, assignee_ids: [ann.id, bob.id] });
    const body = await getBreakdown(task.id);
    expect(body.members.map((m: Row) => [m.name, m.bill_rate, m.bill_rate_source])).toEqual([
      ['Ann', 0, 'role'],
      ['Bob', 0, 'none'],
    ]);
    expect(body.warnings).toEqual([{ code: 'MISSING_BILL_RATE', team_member_id: bob.id, name: 'Bob' }]);
    // Costs 50 + 40 + 10 fixed = 100, no revenue: margins -100 (estimated), -10 (actual: only the fixed cost).
    const csv = parseCsv((await h.api.get(`/api/project-finance/project/${project.id}/export?format=csv`).expect(200)).text);
    const header = csv[0] as string[];
    const total = csv.find((r) => r[0] === 'Total') as string[];
    const cell = (name: string) => total[header.indexOf(name)];
    expect([cell('Estimated revenue (USD)'), cell('Actual revenue (USD)'), cell('Estimated margin (USD)'), cell('Actual margin (USD)'), cell('Missing rates')]).toEqual(['0', '0', '-100', '-10', 'yes']);
  });
});

describe('a project created per day', () => {
  it('takes rate_unit and hours_per_day on creation, refusing bad ones with a 400 naming the field and creating nothing', async () => {
    const created = await h.api.post('/api/projects', { name: 'Per day', rate_unit: 'day', hours_per_day: 7.5 }).expect(201);
    expect(created.body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
    const defaults = await h.api.post('/api/projects', { name: 'Per hour' }).expect(201);
    expect(defaults.body.body).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
    const count = async () => (await h.api.get('/api/projects?limit=1000').expect(200)).body.body.length;
    const before = await count();
    for (const [bad, field] of [
      [{ rate_unit: 'days' }, 'rate_unit'],
      [{ hours_per_day: 24.5 }, 'hours_per_day'],
      [{ hours_per_day: -1 }, 'hours_per_day'],
      [{ hours_per_day: 7.125 }, 'hours_per_day'],
      [{ rate_unit: null }, 'rate_unit'],
    ] as [Row, string][]) {
      const res = await h.api.post('/api/projects', { name: 'Refused', ...bad }).expect(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    }
    expect(await count()).toBe(before);
    // 24 is allowed (the bound is inclusive).
    await h.api.post('/api/projects', { name: 'Whole days', rate_unit: 'day', hours_per_day: 24 }).expect(201);
  });
});

describe("the cached list follows the project's unit", () => {
  it('answers the new unit and day length after a PATCH, and then day rates from the first card', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 6, assignee_ids: [ann.id] });
    await getList(project.id);
    expect((await getList(project.id)).project).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
    await h.api.patch(`/api/projects/${project.id}`, { rate_unit: 'day', hours_per_day: 6 }).expect(200);
    expect((await getList(project.id)).project).toMatchObject({ rate_unit: 'day', hours_per_day: 6 });
    await getList(project.id);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 300, bill_rate: 450 }]);
    // 6 h of a 6-hour day: 300 cost, 450 revenue, margin 150; shown hourly 50 and 75.
    const list = await getList(project.id);
    expect(list.tasks[0]).toMatchObject({ id: task.id, estimated_labor_cost: 300, estimated_revenue: 450, estimated_margin: 150 });
    expect(list.tasks[0].assignees).toEqual([expect.objectContaining({ hourly_rate: 50 })]);
    expect((await getBreakdown(task.id)).members[0]).toMatchObject({ hourly_rate: 50, day_rate: 300, bill_rate: 75, day_bill_rate: 450 });
  });
});

describe('dated today by default', () => {
  it('dates an own rate and a previewed card today when no day is given; the preview then equals the PUT', async () => {
    const { project, dev, qa, ann, p } = await rated();
    // Ann's own cost from today: 70. Her logs are all in the past: unchanged; her estimate 5 x 70 = 350.
    await ownRates(project.id, ann.id, { hourly_rate: 70, bill_rate: 100 });
    expect(byName((await getBreakdown(p.id)).members, 'Ann')).toMatchObject({ hourly_rate: 70, cost_rate_source: 'member', estimated_cost: 350, actual_cost: 355 });
    const explained = (await h.api.get(`/api/projects/${project.id}/members/${ann.id}/rates`).expect(200)).body.body;
    expect(explained.hourly_rate).toEqual({ amount: 70, source: 'member', effective_from: explained.date });
    await h.api.get(`/api/projects/${project.id}/members/${ann.id}/rates?date=2026-13-01`).expect(400);
    // A card from today: QA bills 60: Bob's estimate earns 5 x 60 = 300; his past hour still none (0).
    const change = {
      roles: [
        { job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 },
        { job_role_id: qa.id, hourly_rate: 40, bill_rate: 60 },
      ],
    };
    const preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, change).expect(200)).body.body;
    // P after: revenue 500 + 300 = 800 estimated, 595 actual; costs 350 + 200 = 550 + 25 = 575: margin 225;
    // actual 355 + 40 + 25 = 420: margin 175.
    expect(preview.tasks).toEqual([expect.objectContaining({ id: p.id, after: expect.objectContaining({ estimated_revenue: 800, actual_revenue: 595, estimated_margin: 225, actual_margin: 175 }) })]);
    await h.api.put(`/api/projects/${project.id}/rate-card`, change).expect(200);
    const body = await getBreakdown(p.id);
    expect(body.task).toMatchObject(preview.tasks[0].after);
    // Bob's bill rate is 60 today, but his 07-10 hour had none: still said.
    expect(body.warnings).toEqual([{ code: 'MISSING_BILL_RATE', team_member_id: expect.any(String), name: 'Bob' }]);
  });
});
