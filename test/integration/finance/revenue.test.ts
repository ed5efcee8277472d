import ExcelJS from 'exceljs';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, breakdown, createJobRole, createMember, createProject, createTask, logTime } from '../../support/fixtures';
import { binary, parseCsv } from '../../support/files';
import { expectProjectMatchesOracle } from '../figures/check';

/*
 * Revenue, cost and margin (docs/finance-rules.md R20-R27), by hand: a day-rate project with 7.5-hour
 * days, a member's own rate beating its role's on some days only, a non-billable task's margin, the
 * warnings, the exports' columns and the rate preview's figures. Every project is also held to the
 * independent oracle (test/support/oracle.ts).
 *
 * The inputs go through the routes of section 8 (docs/api.md): the card with its bill rates, a member's
 * own rates, the project's unit (set while it has no rate entry).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** The project's card from the beginning: each role's cost and bill rate (R20). */
async function card(projectId: string, roles: { job_role_id: string; hourly_rate: number | null; bill_rate?: number | null }[]) {
  await h.api.put(`/api/projects/${projectId}/rate-card`, { roles, effective_from: '1970-01-01' }).expect(200);
}

/** A member's own rates from a day on (R22). */
async function ownRates(projectId: string, memberId: string, rates: { hourly_rate: number | null; bill_rate: number | null; effective_from: string }) {
  await h.api.put(`/api/projects/${projectId}/members/${memberId}/rates`, rates).expect(200);
}

/** A project priced per day of `hoursPerDay` hours (R21), set while it has no rate entry. */
async function pricedPerDay(projectId: string, hoursPerDay: number) {
  await h.api.patch(`/api/projects/${projectId}`, { rate_unit: 'day', hours_per_day: hoursPerDay }).expect(200);
}

type Member = Record<string, unknown> & { name: string; cost_lines: Record<string, unknown>[] };

const member = (body: { members: Member[] }, name: string) => body.members.find((m) => m.name === name) as Member;

describe('day rates (R21)', () => {
  it('costs 7.5 h of a 7.5-hour day at exactly the day rate, 3.33 h at 3.33 x rate / 7.5, and shows the hourly rate to 4 decimals', async () => {
    const project = await createProject(h.api);
    await pricedPerDay(project.id, 7.5);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 100, bill_rate: 150 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const ben = await createMember(h.api, { name: 'Ben' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await addToProject(h.api, project.id, ben.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 15, assignee_ids: [ann.id, ben.id] });
    await logTime(h.api, task.id, ann.id, { seconds: 27_000, logged_at: '2026-11-02T10:00:00Z' });
    await logTime(h.api, task.id, ben.id, { seconds: 11_988, logged_at: '2026-11-03T10:00:00Z' });

    const body = await breakdown(h.api, task.id);
    // Ann: 7.5 h x 100 / 7.5 = 100.00, 7.5 x 150 / 7.5 = 150.00. Ben: 3.33 h: 333 / 7.5 = 44.40, 499.5 / 7.5 = 66.60.
    // Estimates: 7.5 h each, 100.00 and 150.00 each.
    expect(member(body as never, 'Ann')).toMatchObject({
      hourly_rate: 13.3333,
      day_rate: 100,
      bill_rate: 20,
      day_bill_rate: 150,
      estimated_cost: 100,
      estimated_revenue: 150,
      actual_cost: 100,
      actual_revenue: 150,
      cost_rate_source: 'role',
      bill_rate_source: 'role',
    });
    expect(member(body as never, 'Ben').cost_lines).toEqual([
      {
        job_role: dev.name,
        hourly_rate: 13.3333,
        day_rate: 100,
        bill_rate: 20,
        day_bill_rate: 150,
        logged_hours: 3.33,
        actual_cost: 44.4,
        actual_revenue: 66.6,
        first_day: '2026-11-03',
        last_day: '2026-11-03',
      },
    ]);
    expect(body.task).toMatchObject({
      estimated_labor_cost: 200,
      actual_labor_cost: 144.4,
      estimated_revenue: 300,
      actual_revenue: 216.6,
      estimated_margin: 100,
      actual_margin: 72.2,
      has_missing_rates: false,
    });
    const list = (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body;
    expect(list.project).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
    expect(list.tasks[0].assignees.map((a: { hourly_rate: number }) => a.hourly_rate)).toEqual([13.3333, 13.3333]);
    await expectProjectMatchesOracle(h, project.id);
  });

  it('costs 8 h at 105.00 a day with 8-hour days at 105.00, not at 13.13 an hour (105.04)', async () => {
    const project = await createProject(h.api);
    await pricedPerDay(project.id, 8);
    const dev = await createJobRole(h.api);
    await card(project.id, [{ job_role_id: dev.id, hourly_rate: 105 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 8, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, { hours: 8, logged_at: '2026-11-02T10:00:00Z' });
    const body = await breakdown(h.api, task.id);
    expect(body.task).toMatchObject({ estimated_labor_cost: 105, actual_labor_cost: 105 });
    expect(member(body as never, 'Ann')).toMatchObject({ hourly_rate: 13.125, day_rate: 105 });
    await expectProjectMatchesOracle(h, project.id);
  });
});

/** Developer at 50.00 (cost) and 80.00 (bill) from the beginning; Ann's own cost rate 60.00 from 2026-07-01 (R22's example). */
async function overrideProject(billable: boolean) {
  const project = await createProject(h.api);
  const dev = await createJobRole(h.api);
  await card(project.id, [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }]);
  const ann = await createMember(h.api, { name: 'Ann' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await ownRates(project.id, ann.id, { hourly_rate: 60, bill_rate: null, effective_from: '2026-07-01' });
  const task = await createTask(h.api, project.id, { estimated_hours: 10, fixed_cost: 50, billable, assignee_ids: [ann.id] });
  await logTime(h.api, task.id, ann.id, { hours: 2, logged_at: '2026-06-30T10:00:00Z' });
  await logTime(h.api, task.id, ann.id, { hours: 3, logged_at: '2026-07-01T10:00:00Z' });
  return { project, dev, ann, task };
}

describe("a member's own rate (R22) and revenue and margin (R23, R24)", () => {
  it('beats the role\'s rate from its day on only, each rate on its own: the lines split there', async () => {
    const { project, dev, task } = await overrideProject(true);
    const body = await breakdown(h.api, task.id);
    expect(member(body as never, 'Ann')).toMatchObject({
      hourly_rate: 60,
      bill_rate: 80,
      cost_rate_source: 'member',
      bill_rate_source: 'role',
      estimated_cost: 600,
      estimated_revenue: 800,
      actual_cost: 280,
      actual_revenue: 400,
    });
    expect(member(body as never, 'Ann').cost_lines).toEqual([
      { job_role: dev.name, hourly_rate: 50, bill_rate: 80, logged_hours: 2, actual_cost: 100, actual_revenue: 160, first_day: '2026-06-30', last_day: '2026-06-30' },
      { job_role: dev.name, hourly_rate: 60, bill_rate: 80, logged_hours: 3, actual_cost: 180, actual_revenue: 240, first_day: '2026-07-01', last_day: '2026-07-01' },
    ]);
    expect(body.grouped_members[0]).toMatchObject({ estimated_revenue: 800, actual_revenue: 400 });
    // Estimated: 800 - (600 + 50) = 150; actual: 400 - (280 + 50) = 70.
    expect(body.task).toMatchObject({ total_estimated_cost: 650, total_actual_cost: 330, estimated_revenue: 800, actual_revenue: 400, estimated_margin: 150, actual_margin: 70 });
    expect(body.warnings).toEqual([]);
    // The range keeps the estimate and cuts the actuals: July's line only, 240 - (180 + 50) = 10.
    const july = (await h.api.get(`/api/project-finance/project/${project.id}/tasks?from=2026-07-01`).expect(200)).body.body;
    expect(july.tasks[0]).toMatchObject({ actual_labor_cost: 180, actual_revenue: 240, actual_margin: 10, estimated_margin: 150 });
    expect(july.totals).toMatchObject({ actual_revenue: 240, actual_margin: 10, estimated_margin: 150, has_missing_rates: false });
    await expectProjectMatchesOracle(h, project.id);
  });

  it('earns nothing on a non-billable task, whose margin is minus its cost', async () => {
    const { project, task } = await overrideProject(false);
    const body = await breakdown(h.api, task.id);
    expect(body.task).toMatchObject({ estimated_revenue: 0, actual_revenue: 0, estimated_margin: -650, actual_margin: -330 });
    // The lines still show the bill rate of their days; they earn nothing.
    expect(member(body as never, 'Ann').cost_lines.map((line) => [line.bill_rate, line.actual_revenue])).toEqual([
      [80, 0],
      [80, 0],
    ]);
    const list = (await h.api.get(`/api/project-finance/project/${project.id}/tasks?group_by=status`).expect(200)).body.body;
    expect(list.totals).toMatchObject({ estimated_revenue: 0, actual_revenue: 0, estimated_margin: -650, actual_margin: -330 });
    expect(list.groups[0]).toMatchObject({ estimated_margin: -650, actual_margin: -330 });
    await expectProjectMatchesOracle(h, project.id);
  });
});

describe('missing rates (R25)', () => {
  async function warnedProject(withBillRate: boolean) {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    const tester = await createJobRole(h.api);
    await card(project.id, [
      { job_role_id: dev.id, hourly_rate: 50, bill_rate: withBillRate ? 80 : null },
      { job_role_id: tester.id, hourly_rate: 40 },
    ]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const dan = await createMember(h.api, { name: 'Dan' });
    const finn = await createMember(h.api, { name: 'Finn' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    await addToProject(h.api, project.id, dan.id, tester.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [ann.id, dan.id] });
    const quiet = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, finn.id, { seconds: 1800, logged_at: '2026-11-02T10:00:00Z' });
    return { project, task, quiet, dan, finn };
  }

  it('warns of a cost rate missing on a day that counts, and of a bill rate in a project that bills', async () => {
    const { project, task, quiet, dan, finn } = await warnedProject(true);
    const body = await breakdown(h.api, task.id);
    // Dan: a Tester (no bill rate) with 2 h of the estimate; Finn: no role, 30 minutes logged.
    expect(body.warnings).toEqual([
      { code: 'MISSING_BILL_RATE', team_member_id: dan.id, name: 'Dan' },
      { code: 'MISSING_COST_RATE', team_member_id: finn.id, name: 'Finn' },
      { code: 'MISSING_BILL_RATE', team_member_id: finn.id, name: 'Finn' },
    ]);
    expect(body.task.has_missing_rates).toBe(true);
    expect((await breakdown(h.api, quiet.id)).warnings).toEqual([]);
    const list = (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body;
    expect(list.tasks.map((row: { id: string; has_missing_rates: boolean }) => [row.id, row.has_missing_rates])).toEqual([
      [task.id, true],
      [quiet.id, false],
    ]);
    expect(list.totals.has_missing_rates).toBe(true);
    await expectProjectMatchesOracle(h, project.id);
  });

  it('says nothing of bill rates in a project that bills nothing, nor on a non-billable task', async () => {
    const { project, task, finn } = await warnedProject(false);
    expect((await breakdown(h.api, task.id)).warnings).toEqual([{ code: 'MISSING_COST_RATE', team_member_id: finn.id, name: 'Finn' }]);
    await expectProjectMatchesOracle(h, project.id);
  });
});

describe('exports and the rate preview (R27)', () => {
  it('writes the revenue, margin and missing-rate columns after the earlier ones, and the lines\' bill rates and revenue', async () => {
    const { project } = await overrideProject(true);
    const csv = parseCsv((await h.api.get(`/api/project-finance/project/${project.id}/export?format=csv`).expect(200)).text);
    const header = csv[0] as string[];
    expect(header.slice(15)).toEqual(['Variance (USD)', 'Estimated revenue (USD)', 'Actual revenue (USD)', 'Estimated margin (USD)', 'Actual margin (USD)', 'Missing rates']);
    expect(csv[1]?.slice(15)).toEqual(['320', '800', '400', '150', '70', 'no']);
    expect(csv[2]?.slice(15)).toEqual(['320', '800', '400', '150', '70', 'no']);
    const lines = parseCsv((await h.api.get(`/api/project-finance/project/${project.id}/export?format=csv&sheet=cost_lines`).expect(200)).text);
    expect(lines.map((row) => row.slice(5))).toEqual([
      ['Hourly rate (USD)', 'Logged hours', 'Actual cost (USD)', 'First day', 'Last day', 'Bill rate (USD)', 'Actual revenue (USD)'],
      ['50', '2', '100', '2026-06-30', '2026-06-30', '80', '160'],
      ['60', '3', '180', '2026-07-01', '2026-07-01', '80', '240'],
    ]);
    const xlsx = await h.api
      .get(`/api/project-finance/project/${project.id}/export?format=xlsx`)
      .buffer(true)
      .parse(binary)
      .expect(200);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(xlsx.body as unknown as ExcelJS.Buffer);
    const sheet = book.getWorksheet('Finance') as ExcelJS.Worksheet;
    expect((sheet.getRow(2).values as unknown[]).slice(16)).toEqual([320, 800, 400, 150, 70, 'no']);
  });

  it('previews revenue and margin before and after a card change, as the change then answers', async () => {
    const { project, dev, task } = await overrideProject(true);
    // Developer at 70 from 2026-06-01, with no bill rate from then on: Ann's June day costs 2 x 70 = 140
    // and earns nothing; her July day keeps her own 60 and earns nothing either; her estimate costs 10 x 60.
    const change = { roles: [{ job_role_id: dev.id, hourly_rate: 70, bill_rate: null }], effective_from: '2026-06-01' };
    const preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, change).expect(200)).body.body;
    const before = { estimated_labor_cost: 600, actual_labor_cost: 280, estimated_revenue: 800, actual_revenue: 400, estimated_margin: 150, actual_margin: 70 };
    const after = { estimated_labor_cost: 600, actual_labor_cost: 320, estimated_revenue: 0, actual_revenue: 0, estimated_margin: -650, actual_margin: -370 };
    expect(preview.project_totals.before).toMatchObject(before);
    expect(preview.project_totals.after).toMatchObject(after);
    expect(preview.tasks).toEqual([{ id: task.id, name: task.name, before: expect.objectContaining(before), after: expect.objectContaining(after) }]);
    await h.api.put(`/api/projects/${project.id}/rate-card`, change).expect(200);
    expect((await breakdown(h.api, task.id)).task).toMatchObject(after);
    await expectProjectMatchesOracle(h, project.id);
    // A card that leaves bill_rate out keeps the role's bill rate (docs/finance-rules.md R26.1): only costs move.
    const costOnly = { roles: [{ job_role_id: dev.id, hourly_rate: 75 }], effective_from: '2026-06-01' };
    const kept = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, costOnly).expect(200)).body.body;
    // June: 2 x 75 = 150 (July keeps Ann's own 60): 330; revenue still 0.
    expect(kept.project_totals.after).toMatchObject({ actual_labor_cost: 330, actual_revenue: 0, actual_margin: -380 });
  });
});
