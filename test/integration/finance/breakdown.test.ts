import { setClock } from '../../../src/clock';
import { Harness, startHarness } from '../../support/harness';
import {
  Breakdown,
  addToProject,
  breakdown,
  createJobRole,
  createMember,
  createProject,
  createTask,
  logTime,
  setRateCard,
} from '../../support/fixtures';

/*
 * Every rule of docs/finance-rules.md R1-R11 through HTTP, with figures computed by hand in the comments.
 * Rates: Dev 100/h, QA 50.50/h, Designer has no rate in the card, Eve has no role, Zed is not in the project.
 * The service clock stands at 2026-11-20T12:00:00Z, so a log of "now" and a role changed "today" fall on
 * one day whenever the suite runs (on the machine's clock, UTC midnight could fall between them).
 */
let h: Harness;
let projectId: string;
const m = {} as Record<'ann' | 'ben' | 'cy' | 'dee' | 'eve' | 'zed', { id: string; name: string }>;

beforeAll(async () => {
  setClock(new Date('2026-11-20T12:00:00Z'));
  h = await startHarness();
  const dev = await createJobRole(h.api, 'Dev');
  const qa = await createJobRole(h.api, 'QA');
  const designer = await createJobRole(h.api, 'Designer');
  const project = await createProject(h.api, { currency: 'USD' });
  projectId = project.id;
  await setRateCard(h.api, projectId, [
    { job_role_id: dev.id, hourly_rate: 100 },
    { job_role_id: qa.id, hourly_rate: 50.5 },
  ]);
  m.ann = await createMember(h.api, { name: 'Ann', avatar_url: 'https://img.example.com/ann.png' });
  m.ben = await createMember(h.api, { name: 'Ben' });
  m.cy = await createMember(h.api, { name: 'Cy' });
  m.dee = await createMember(h.api, { name: 'Dee' });
  m.eve = await createMember(h.api, { name: 'Eve' });
  m.zed = await createMember(h.api, { name: 'Zed' });
  await addToProject(h.api, projectId, m.ann.id, dev.id);
  await addToProject(h.api, projectId, m.ben.id, dev.id);
  await addToProject(h.api, projectId, m.cy.id, qa.id);
  await addToProject(h.api, projectId, m.dee.id, designer.id);
  await addToProject(h.api, projectId, m.eve.id, null);
});

afterAll(async () => {
  setClock(undefined);
  await h.close();
});

const row = (b: Breakdown, name: string) => b.members.find((x) => x.name === name);

function expectConsistent(b: Breakdown) {
  const grouped = b.grouped_members.flatMap((g) => g.members.map((x) => ({ ...x, job_title_name: g.jobRole })));
  expect(grouped.map((x) => x.team_member_id).sort()).toEqual(b.members.map((x) => x.team_member_id).sort());
  for (const member of b.members) {
    expect(grouped.find((x) => x.team_member_id === member.team_member_id)).toEqual(member);
  }
  const cents = (v: number) => Math.round(v * 1000);
  for (const group of b.grouped_members) {
    for (const field of ['estimated_hours', 'logged_hours', 'estimated_cost', 'actual_cost'] as const) {
      expect(cents(group[field])).toBe(group.members.reduce((s, x) => s + cents(x[field]), 0));
    }
  }
  const t = b.task;
  expect(cents(t.estimated_labor_cost)).toBe(b.members.reduce((s, x) => s + cents(x.estimated_cost), 0));
  expect(cents(t.actual_labor_cost)).toBe(b.members.reduce((s, x) => s + cents(x.actual_cost), 0));
  expect(cents(t.logged_hours)).toBe(b.members.reduce((s, x) => s + cents(x.logged_hours), 0));
  expect(cents(t.total_estimated_cost)).toBe(cents(t.estimated_labor_cost) + cents(t.fixed_cost));
  expect(cents(t.total_actual_cost)).toBe(cents(t.actual_labor_cost) + cents(t.fixed_cost));
}

describe('GET /api/project-finance/task/:id/breakdown', () => {
  it('splits 10 h over three assignees (3.34, 3.33, 3.33), costs them at their rates and adds the fixed cost', async () => {
    const task = await createTask(h.api, projectId, {
      estimated_hours: 10,
      fixed_cost: 99.99,
      assignee_ids: [m.cy.id, m.ben.id, m.ann.id],
    });
    await logTime(h.api, task.id, m.ann.id, { seconds: 3600, logged_at: '2026-11-20T09:30:00Z' });
    await logTime(h.api, task.id, m.cy.id, { seconds: 2000, logged_at: '2026-11-18T16:00:00Z' });
    await logTime(h.api, task.id, m.cy.id, { seconds: 2000, logged_at: '2026-11-19T08:00:00Z' });

    const res = await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
    expect(res.body.success).toBe(true);
    const b = res.body.body as Breakdown;
    // Ann 3.34 x 100 = 334.00; Ben 3.33 x 100 = 333.00; Cy 3.33 x 50.50 = 168.165 -> 168.17.
    // Logged: Ann 1 h -> 100.00; Cy 4000 s = 1.111 h -> 1.11 x 50.50 = 56.055 -> 56.06.
    expect(b.task).toEqual({
      id: task.id,
      name: task.name,
      project_id: projectId,
      billable: true,
      currency: 'USD',
      estimated_hours: 10,
      logged_hours: 2.11,
      estimated_labor_cost: 835.17,
      actual_labor_cost: 156.06,
      fixed_cost: 99.99,
      total_estimated_cost: 935.16,
      total_actual_cost: 256.05,
      // No bill rate anywhere: no revenue, each margin minus its total cost (R23, R24); every rate found.
      estimated_revenue: 0,
      actual_revenue: 0,
      estimated_margin: -935.16,
      actual_margin: -256.05,
      has_missing_rates: false,
    });
    // No bill rate anywhere (R20-R23): every member and line bills 0 from no source, costs from its role.
    const unbilled = { bill_rate: 0, estimated_revenue: 0, actual_revenue: 0, cost_rate_source: 'role', bill_rate_source: 'none' };
    expect(b.members).toEqual([
      { team_member_id: m.ann.id, name: 'Ann', avatar_url: 'https://img.example.com/ann.png', hourly_rate: 100, job_title_name: 'Dev', estimated_hours: 3.34, logged_hours: 1, estimated_cost: 334, actual_cost: 100,
        ...unbilled,
        cost_lines: [{ job_role: 'Dev', hourly_rate: 100, bill_rate: 0, logged_hours: 1, actual_cost: 100, actual_revenue: 0, first_day: '2026-11-20', last_day: '2026-11-20' }] },
      { team_member_id: m.ben.id, name: 'Ben', avatar_url: null, hourly_rate: 100, job_title_name: 'Dev', estimated_hours: 3.33, logged_hours: 0, estimated_cost: 333, actual_cost: 0, ...unbilled, cost_lines: [] },
      // One rate all along: Cy's two logs (two days) make one line, 4000 s = 1.11 h.
      { team_member_id: m.cy.id, name: 'Cy', avatar_url: null, hourly_rate: 50.5, job_title_name: 'QA', estimated_hours: 3.33, logged_hours: 1.11, estimated_cost: 168.17, actual_cost: 56.06,
        ...unbilled,
        cost_lines: [{ job_role: 'QA', hourly_rate: 50.5, bill_rate: 0, logged_hours: 1.11, actual_cost: 56.06, actual_revenue: 0, first_day: '2026-11-18', last_day: '2026-11-19' }] },
    ]);
    expect(b.warnings).toEqual([]);
    expect(b.grouped_members.map((g) => [g.jobRole, g.estimated_hours, g.logged_hours, g.estimated_cost, g.actual_cost])).toEqual([
      ['Dev', 6.67, 1, 667, 100],
      ['QA', 3.33, 1.11, 168.17, 56.06],
    ]);
    expectConsistent(b);
    // The JSON carries the rounded decimals themselves, never a binary-float artefact.
    expect(res.text).not.toMatch(/\d\.\d{3,}/);
    expect(res.headers['content-type']).toMatch(/application\/json/);
  });

  it('includes people who logged time without being assigned, with no estimate and their own rate', async () => {
    const task = await createTask(h.api, projectId, { estimated_hours: 4, assignee_ids: [m.ann.id] });
    await logTime(h.api, task.id, m.ben.id, { hours: 1.5 });
    await logTime(h.api, task.id, m.zed.id, { seconds: 1800 });
    const b = await breakdown(h.api, task.id);
    // Ann keeps the whole estimate: 4 h x 100 = 400. Ben logged 1.5 h x 100 = 150. Zed is not in the project: rate 0.
    expect(b.members.map((x) => [x.name, x.job_title_name, x.hourly_rate, x.estimated_hours, x.logged_hours, x.estimated_cost, x.actual_cost])).toEqual([
      ['Ann', 'Dev', 100, 4, 0, 400, 0],
      ['Ben', 'Dev', 100, 0, 1.5, 0, 150],
      ['Zed', 'Unassigned', 0, 0, 0.5, 0, 0],
    ]);
    expect(b.task).toMatchObject({ estimated_hours: 4, logged_hours: 2, estimated_labor_cost: 400, actual_labor_cost: 150 });
    expect(b.grouped_members.map((g) => g.jobRole)).toEqual(['Dev', 'Unassigned']);
    expectConsistent(b);
  });

  it('lists members whose role has no rate, or who have no role, at rate 0; "Unassigned" comes last', async () => {
    const task = await createTask(h.api, projectId, { estimated_hours: 3, assignee_ids: [m.eve.id, m.dee.id, m.cy.id] });
    await logTime(h.api, task.id, m.dee.id, { seconds: 7200 });
    await logTime(h.api, task.id, m.eve.id, { seconds: 36 });
    const b = await breakdown(h.api, task.id);
    // 3 h over Cy, Dee, Eve: 1 h each. Cy 1 x 50.50 = 50.50; Dee (Designer, no rate) and Eve (no role) cost 0.
    expect(b.grouped_members.map((g) => [g.jobRole, g.members.map((x) => x.name), g.estimated_cost, g.logged_hours])).toEqual([
      ['Designer', ['Dee'], 0, 2],
      ['QA', ['Cy'], 50.5, 0],
      ['Unassigned', ['Eve'], 0, 0.01],
    ]);
    expect(row(b, 'Dee')).toMatchObject({ hourly_rate: 0, estimated_hours: 1, actual_cost: 0 });
    expect(b.task).toMatchObject({ estimated_labor_cost: 50.5, actual_labor_cost: 0, logged_hours: 2.01 });
    expectConsistent(b);
  });

  it('keeps the estimate of a task without assignees, costs it nothing, and still counts the fixed cost', async () => {
    const empty = await createTask(h.api, projectId, { estimated_hours: 8, fixed_cost: 250 });
    const b = await breakdown(h.api, empty.id);
    expect(b.grouped_members).toEqual([]);
    expect(b.members).toEqual([]);
    expect(b.task).toMatchObject({
      estimated_hours: 8,
      logged_hours: 0,
      estimated_labor_cost: 0,
      actual_labor_cost: 0,
      fixed_cost: 250,
      total_estimated_cost: 250,
      total_actual_cost: 250,
    });

    await logTime(h.api, empty.id, m.ben.id, { seconds: 5400 });
    const withLogger = await breakdown(h.api, empty.id);
    expect(withLogger.members.map((x) => [x.name, x.estimated_hours, x.logged_hours, x.actual_cost])).toEqual([['Ben', 0, 1.5, 150]]);
    expect(withLogger.task).toMatchObject({ estimated_hours: 8, estimated_labor_cost: 0, actual_labor_cost: 150, total_actual_cost: 400 });
  });

  it('orders members by name then id, so namesakes keep a stable order', async () => {
    const twinA = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, projectId, twinA.id, null);
    const task = await createTask(h.api, projectId, { estimated_hours: 0.03, assignee_ids: [twinA.id, m.ann.id, m.ben.id] });
    const b = await breakdown(h.api, task.id);
    const anns = [m.ann.id, twinA.id].sort();
    // 0.03 h in three: one hundredth each, in member order.
    expect(b.members.map((x) => x.team_member_id)).toEqual([...anns, m.ben.id]);
    expect(b.members.map((x) => x.estimated_hours)).toEqual([0.01, 0.01, 0.01]);
  });

  it('rounds logged hours to hundredths per member and costs the rounded hours', async () => {
    const task = await createTask(h.api, projectId, { assignee_ids: [m.ann.id, m.cy.id] });
    await logTime(h.api, task.id, m.ann.id, { seconds: 18 }); // 0.005 h -> 0.01 h -> 1.00
    await logTime(h.api, task.id, m.cy.id, { seconds: 17 }); // 0.0047 h -> 0.00 h -> 0.00
    const b = await breakdown(h.api, task.id);
    expect(b.members.map((x) => [x.name, x.logged_hours, x.actual_cost])).toEqual([
      ['Ann', 0.01, 1],
      ['Cy', 0, 0],
    ]);
  });

  it('follows time log deletions, rate card changes and role changes', async () => {
    const task = await createTask(h.api, projectId, { estimated_hours: 2, assignee_ids: [m.ben.id] });
    const first = await logTime(h.api, task.id, m.ben.id, { seconds: 3600 });
    await logTime(h.api, task.id, m.ben.id, { seconds: 3600 });
    expect((await breakdown(h.api, task.id)).task.actual_labor_cost).toBe(200);

    await h.api.delete(`/api/time-logs/${first.id}`).expect(200);
    expect((await breakdown(h.api, task.id)).task).toMatchObject({ logged_hours: 1, actual_labor_cost: 100 });

    const lead = await createJobRole(h.api, 'Lead');
    const roles = (await h.api.get(`/api/projects/${projectId}/rate-card`).expect(200)).body.body.roles as { job_role_id: string; hourly_rate: number }[];
    await setRateCard(h.api, projectId, [...roles.map((r) => ({ job_role_id: r.job_role_id, hourly_rate: r.hourly_rate })), { job_role_id: lead.id, hourly_rate: 120.25 }]);
    await addToProject(h.api, projectId, m.ben.id, lead.id);
    const b = await breakdown(h.api, task.id);
    expect(b.members).toEqual([expect.objectContaining({ name: 'Ben', job_title_name: 'Lead', hourly_rate: 120.25, estimated_cost: 240.5, actual_cost: 120.25 })]);
    // Restore Ben's role for the other tests.
    const dev = roles.find((r) => r.hourly_rate === 100) as { job_role_id: string };
    await addToProject(h.api, projectId, m.ben.id, dev.job_role_id);
  });

  it('computes in whole yen for a JPY project', async () => {
    const yenRole = await createJobRole(h.api, 'Yen engineer');
    const project = await createProject(h.api, { currency: 'JPY' });
    await setRateCard(h.api, project.id, [{ job_role_id: yenRole.id, hourly_rate: 3333 }]);
    for (const member of [m.ann, m.ben, m.cy]) await addToProject(h.api, project.id, member.id, yenRole.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 10, fixed_cost: 1000, assignee_ids: [m.ann.id, m.ben.id, m.cy.id] });
    await logTime(h.api, task.id, m.ann.id, { seconds: 4000 }); // 1.11 h x 3333 = 3699.63 -> 3700
    const b = await breakdown(h.api, task.id);
    // 3.34 x 3333 = 11132.22 -> 11132; 3.33 x 3333 = 11098.89 -> 11099.
    expect(b.members.map((x) => x.estimated_cost)).toEqual([11132, 11099, 11099]);
    expect(b.task).toMatchObject({ currency: 'JPY', estimated_labor_cost: 33330, actual_labor_cost: 3700, total_estimated_cost: 34330, total_actual_cost: 4700 });
  });

  describe('include_subtasks=true', () => {
    it('sums the task and its non-archived descendants, member by member', async () => {
      const parent = await createTask(h.api, projectId, { estimated_hours: 10, fixed_cost: 100, assignee_ids: [m.ann.id, m.ben.id] });
      const child = await createTask(h.api, projectId, { parent_task_id: parent.id, estimated_hours: 3, fixed_cost: 50, assignee_ids: [m.ann.id, m.cy.id, m.ben.id] });
      const grandchild = await createTask(h.api, projectId, { parent_task_id: child.id, estimated_hours: 1, assignee_ids: [m.cy.id] });
      const archived = await createTask(h.api, projectId, { parent_task_id: parent.id, estimated_hours: 99, fixed_cost: 999, assignee_ids: [m.ann.id] });
      await logTime(h.api, parent.id, m.ann.id, { seconds: 3600 });
      await logTime(h.api, child.id, m.ann.id, { seconds: 1800 });
      await logTime(h.api, grandchild.id, m.zed.id, { seconds: 3600 });
      await logTime(h.api, archived.id, m.ann.id, { seconds: 36000 });
      await h.api.delete(`/api/tasks/${archived.id}`).expect(200);

      const alone = await breakdown(h.api, parent.id);
      expect(alone.task).toMatchObject({ estimated_hours: 10, fixed_cost: 100, estimated_labor_cost: 1000, actual_labor_cost: 100 });

      const b = await breakdown(h.api, parent.id, true);
      // Parent: Ann 5 h, Ben 5 h (500 each), Ann logged 1 h (100).
      // Child: 3 h over Ann, Ben, Cy = 1 h each (100, 100, 50.50); Ann logged 0.5 h (50).
      // Grandchild: Cy 1 h (50.50); Zed logged 1 h at rate 0.
      expect(b.members.map((x) => [x.name, x.estimated_hours, x.logged_hours, x.estimated_cost, x.actual_cost])).toEqual([
        ['Ann', 6, 1.5, 600, 150],
        ['Ben', 6, 0, 600, 0],
        ['Cy', 2, 0, 101, 0],
        ['Zed', 0, 1, 0, 0],
      ]);
      expect(b.task).toEqual({
        id: parent.id,
        name: parent.name,
        project_id: projectId,
        billable: true,
        currency: 'USD',
        estimated_hours: 14,
        logged_hours: 2.5,
        estimated_labor_cost: 1301,
        actual_labor_cost: 150,
        fixed_cost: 150,
        total_estimated_cost: 1451,
        total_actual_cost: 300,
        estimated_revenue: 0,
        actual_revenue: 0,
        estimated_margin: -1451,
        actual_margin: -300,
        // Zed logged time without a role: his cost rate resolves to none (R25).
        has_missing_rates: true,
      });
      expectConsistent(b);
      // The archived child and its logs are gone from everything.
      await h.api.get(`/api/project-finance/task/${archived.id}/breakdown`).expect(404);
    });

    it('equals the plain breakdown for a task without subtasks', async () => {
      const task = await createTask(h.api, projectId, { estimated_hours: 5, fixed_cost: 12.34, assignee_ids: [m.ann.id, m.cy.id] });
      await logTime(h.api, task.id, m.cy.id, { seconds: 999 });
      expect(await breakdown(h.api, task.id, true)).toEqual(await breakdown(h.api, task.id));
    });
  });

  describe('errors', () => {
    it('answers 400 INVALID_ID for an id that is not a UUID', async () => {
      for (const bad of ['not-a-uuid', '123', '00000000-0000-0000-0000-00000000000g', "1' or '1'='1"]) {
        const res = await h.api.get(`/api/project-finance/task/${encodeURIComponent(bad)}/breakdown`).expect(400);
        expect(res.body).toMatchObject({ success: false, error: { code: 'INVALID_ID' } });
        expect(typeof res.body.error.message).toBe('string');
      }
    });

    it('answers 404 TASK_NOT_FOUND for an unknown or archived task', async () => {
      const unknown = await h.api.get('/api/project-finance/task/3f1c1b8e-1111-4222-8333-944455556666/breakdown').expect(404);
      expect(unknown.body).toEqual({ success: false, error: { code: 'TASK_NOT_FOUND', message: 'Task not found' } });
      const task = await createTask(h.api, projectId);
      await h.api.delete(`/api/tasks/${task.id}`).expect(200);
      const archived = await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(404);
      expect(archived.body.error.code).toBe('TASK_NOT_FOUND');
    });

    it('answers 400 for an include_subtasks value that is not true or false, and for unknown parameters', async () => {
      const task = await createTask(h.api, projectId);
      const res = await h.api.get(`/api/project-finance/task/${task.id}/breakdown?include_subtasks=yes`).expect(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ path: 'include_subtasks' })] });
      await h.api.get(`/api/project-finance/task/${task.id}/breakdown?include_subtask=true`).expect(400);
    });
  });
});
