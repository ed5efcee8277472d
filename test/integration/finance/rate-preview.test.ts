import { setClock } from '../../../src/clock';
import { CURSOR_BATCH } from '../../../src/db/cursor';
import { readSettings } from '../../../src/finance/inputs/scope';
import { previewSettings } from '../../../src/finance/preview';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, projectWithMember, setRateCard } from '../../support/fixtures';
import { isoMinorUnit, oracleBreakdown, readInputs } from '../../support/oracle';
import { expectProjectMatchesOracle } from '../figures/check';
import { generator } from '../../support/random';

/*
 * POST /rate-card/preview (docs/finance-rules.md R18) against the real change: for random rate cards (roles
 * left out, null rates, effective days in the past, today and the future) on a project with subtasks,
 * several members, dated roles and logs over a year, the preview's `after` of every task it lists is
 * what the breakdown shows once the same PUT is made, its `before` what it showed before; every task it
 * does not list keeps its figures; the project totals are the list's totals before and after; and the
 * preview itself writes nothing; and after each change every task's figures are the oracle's. In each of
 * USD, JPY, KWD and CLF (2, 0, 3 and 4 decimals), with half-hours logged and estimated at rates whose last
 * minor digit is often odd, so costs land exactly on half a minor unit. Today is 2026-11-20 (the service
 * clock, set); a seeded generator.
 */
let h: Harness;
beforeAll(async () => {
  setClock(new Date('2026-11-20T12:00:00Z'));
  h = await startHarness();
});
afterAll(async () => {
  previewSettings.fromStored = true;
  readSettings.batchedFrom = CURSOR_BATCH;
  setClock(undefined);
  await h.close();
});

const COSTS = [
  'estimated_labor_cost', 'actual_labor_cost', 'total_estimated_cost', 'total_actual_cost', 'estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin',
] as const;
const TOTALS = [
  'estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost', 'total_estimated_cost', 'total_actual_cost',
  'estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin',
] as const;
const DAYS = ['2026-01-01', '2026-03-15', '2026-06-01', '2026-09-30', '2026-11-20', '2026-11-21', '2027-02-01'];

// Both ways a preview is computed: from the stored figures and the changed members' lines (when the
// stored figures are current, as they are after the reads below), and from every input of the tasks.
const WAYS = [
  ['from the stored figures and the changed lines', true],
  ['from every input of the tasks it changes', false],
] as const;
const CURRENCIES = ['USD', 'JPY', 'KWD', 'CLF'] as const;
it.each(WAYS.flatMap(([way, fromStored]) => CURRENCIES.map((currency, i) => [way, currency, fromStored, i] as const)))(
  'answers before and after exactly as the breakdowns and the list do around the real change, writing nothing (%s, %s)', async (_way, currency, fromStored, index) => {
  previewSettings.fromStored = fromStored;
  // The reads of many tasks (through a cursor) taken from a few tasks on, as a large project's are.
  readSettings.batchedFrom = 2;
  const random = generator(Number(process.env.PROPERTY_SEED ?? 20261124) + index);
  const project = await createProject(h.api, { currency });
  expect(project.currency).toBe(currency);
  const roles = [];
  for (let i = 0; i < 3; i++) roles.push(await createJobRole(h.api));
  // One rate in three from a short list, so a rate comes back in a later entry of a role (and of another
  // role): a cost line then holds days of periods apart, on either side of the change.
  const currencyRate = () => (random.int(3) === 0 ? random.pick([40, 75]) : Number((random.next() * 150).toFixed(isoMinorUnit(currency))));
  await setRateCard(h.api, project.id, roles.map((role) => ({ job_role_id: role.id, hourly_rate: currencyRate() })));
  const members = [];
  for (let i = 0; i < 4; i++) {
    const member = await createMember(h.api, { name: `Member ${i}` });
    await addToProject(h.api, project.id, member.id, random.int(4) === 0 ? null : random.pick(roles).id);
    members.push(member);
  }
  // One member changes role mid-year.
  await h.api.put(`/api/projects/${project.id}/members/${members[0]?.id}`, { job_role_id: roles[2]?.id, effective_from: '2026-06-15' }).expect(200);
  const tasks: { id: string }[] = [];
  for (let i = 0; i < 8; i++) {
    const parent = i > 2 && random.int(2) === 0 ? random.pick(tasks).id : undefined;
    const assignees = members.filter(() => random.int(2) === 0).map((m) => m.id);
    tasks.push(await createTask(h.api, project.id, { estimated_hours: random.int(40) + random.pick([0, 0.5]), assignee_ids: assignees, parent_task_id: parent, fixed_cost: random.int(3) === 0 ? 100 : 0 }));
  }
  for (let i = 0; i < 30; i++) {
    const day = `2026-${String(1 + random.int(12)).padStart(2, '0')}-${String(1 + random.int(28)).padStart(2, '0')}`;
    // One log in three is 1800 s (0.5 h): at an odd last minor digit, a cost on an exact half.
    await logTime(h.api, random.pick(tasks).id, random.pick(members).id, { seconds: random.int(3) === 0 ? 1800 : 60 + random.int(20_000), logged_at: `${day}T${String(random.int(24)).padStart(2, '0')}:30:00Z` });
  }
  // An archived task with time logged after every effective day: no preview counts it.
  const archived = await createTask(h.api, project.id, { estimated_hours: 5, assignee_ids: members.map((m) => m.id) });
  await logTime(h.api, archived.id, members[0]?.id as string, { seconds: 7200, logged_at: '2027-03-01T10:00:00Z' });
  await h.api.delete(`/api/tasks/${archived.id}`).expect(200);

  const breakdowns = async () => {
    const out = new Map<string, Record<string, number>>();
    for (const task of tasks) out.set(task.id, (await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200)).body.body.task);
    return out;
  };
  const listTotals = async () => (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.totals;
  const history = async () => (await h.api.get(`/api/projects/${project.id}/rate-card/history`).expect(200)).body.body.entries;

  // Which way the previews went: the stored way reads the changed cost lines (member_piece), the other never.
  const statements: string[] = [];
  const onQuery = (query: { sql: string }) => statements.push(query.sql);
  h.db.on('query', onQuery);
  for (let round = 0; round < 12; round++) {
    const body = {
      roles: roles.filter(() => random.int(4) > 0).map((role) => ({ job_role_id: role.id, hourly_rate: random.int(5) === 0 ? null : currencyRate() })),
      effective_from: random.pick(DAYS),
    };
    const before = await breakdowns();
    const totalsBefore = await listTotals();
    const written = await history();
    const preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, body).expect(200)).body.body;
    expect(await history()).toEqual(written); // nothing written
    await h.api.put(`/api/projects/${project.id}/rate-card`, body).expect(200);
    const after = await breakdowns();
    const totalsAfter = await listTotals();

    const context = { round, body };
    expect({ ...context, effective_from: preview.effective_from }).toEqual({ ...context, effective_from: body.effective_from });
    const pick = (figures: Record<string, number>, names: readonly string[]) => Object.fromEntries(names.map((name) => [name, figures[name]]));
    expect({ ...context, totals: preview.project_totals }).toEqual({ ...context, totals: { before: pick(totalsBefore, TOTALS), after: pick(totalsAfter, TOTALS) } });
    const listed = new Map<string, { before: Record<string, number>; after: Record<string, number> }>(
      preview.tasks.map((t: { id: string; before: Record<string, number>; after: Record<string, number> }) => [t.id, t]),
    );
    for (const task of tasks) {
      const was = pick(before.get(task.id) as Record<string, number>, COSTS);
      const is = pick(after.get(task.id) as Record<string, number>, COSTS);
      const entry = listed.get(task.id);
      if (entry) {
        expect({ ...context, task: task.id, before: entry.before, after: entry.after }).toEqual({ ...context, task: task.id, before: was, after: is });
        expect(was).not.toEqual(is);
      } else {
        expect({ ...context, task: task.id, unchanged: is }).toEqual({ ...context, task: task.id, unchanged: was });
      }
    }
    // What the breakdowns show after the change (and so the preview's `after`) is what the oracle computes.
    const inputs = await readInputs(h.db, h.teamId, project.id);
    for (const task of tasks) {
      const expected = pick(oracleBreakdown(inputs, task.id, false).task as unknown as Record<string, number>, COSTS);
      expect({ ...context, task: task.id, after: pick(after.get(task.id) as Record<string, number>, COSTS) }).toEqual({ ...context, task: task.id, after: expected });
    }
  }
  h.db.off('query', onQuery);
  expect(statements.some((sql) => sql.includes('member_piece'))).toBe(fromStored);
  await expectProjectMatchesOracle(h, project.id);
});

it('answers as from every input when a task has lost its stored figures (removed by hand), not a 500', async () => {
  const { role, project, member } = await projectWithMember(h.api, 40, 'Solo');
  const task = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [member.id] });
  await logTime(h.api, task.id, member.id, { seconds: 3600, logged_at: '2026-10-01T09:00:00Z' });
  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  const body = { roles: [{ job_role_id: role.id, hourly_rate: 50 }], effective_from: '2026-09-01' };
  const preview = async (fromStored: boolean) => {
    previewSettings.fromStored = fromStored;
    return (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, body).expect(200)).body.body.tasks;
  };
  // 1 h logged and 2 h estimated, both from 40 to 50.
  const costs = (estimated: number, actual: number) => ({
    estimated_labor_cost: estimated,
    actual_labor_cost: actual,
    total_estimated_cost: estimated,
    total_actual_cost: actual,
    estimated_revenue: 0,
    actual_revenue: 0,
    estimated_margin: -estimated,
    actual_margin: -actual,
  });
  const expected = [{ id: task.id, name: task.name, before: costs(80, 40), after: costs(100, 50) }];
  expect(await preview(true)).toEqual(expected);
  await h.db('task_labor').where({ team_id: h.teamId, task_id: task.id }).delete();
  expect(await preview(true)).toEqual(expected);
  expect(await preview(false)).toEqual(expected);
  previewSettings.fromStored = true;
});

it('reads no cost lines for a change that reprices no logged day (effective after the last log)', async () => {
  const { role, project, member } = await projectWithMember(h.api, 40, 'Later');
  const task = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [member.id] });
  await logTime(h.api, task.id, member.id, { seconds: 3600, logged_at: '2026-10-01T09:00:00Z' });
  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  const statements: string[] = [];
  const onQuery = (query: { sql: string }) => statements.push(query.sql);
  h.db.on('query', onQuery);
  let preview;
  try {
    const body = { roles: [{ job_role_id: role.id, hourly_rate: 50 }], effective_from: '2027-01-01' };
    preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, body).expect(200)).body.body;
  } finally {
    h.db.off('query', onQuery);
  }
  // Nothing changes before 2027: no task listed, the totals as they are (1 h and 2 h at 40).
  expect(preview.tasks).toEqual([]);
  expect([preview.project_totals.before.actual_labor_cost, preview.project_totals.after.actual_labor_cost]).toEqual([40, 40]);
  expect(statements.filter((sql) => sql.includes('member_piece'))).toEqual([]);
});

it('lists nothing for a change that reprices only an archived task\'s time', async () => {
  const { role, project, member } = await projectWithMember(h.api, 40, 'Archivist');
  const live = await createTask(h.api, project.id, { estimated_hours: 2 });
  await logTime(h.api, live.id, member.id, { seconds: 3600, logged_at: '2026-03-01T09:00:00Z' });
  const archived = await createTask(h.api, project.id, { estimated_hours: 5 });
  await logTime(h.api, archived.id, member.id, { seconds: 7200, logged_at: '2026-10-01T09:00:00Z' });
  await h.api.delete(`/api/tasks/${archived.id}`).expect(200);
  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  // From 2026-09-01 only the archived task's 2 h are repriced, and no list counts them: the live task's
  // 1 h of March stays at 40, and nobody is assigned (no estimate is costed again).
  const body = { roles: [{ job_role_id: role.id, hourly_rate: 50 }], effective_from: '2026-09-01' };
  for (const fromStored of [true, false]) {
    previewSettings.fromStored = fromStored;
    const preview = (await h.api.post(`/api/projects/${project.id}/rate-card/preview`, body).expect(200)).body.body;
    expect({ fromStored, tasks: preview.tasks, actual: preview.project_totals.after.actual_labor_cost }).toEqual({ fromStored, tasks: [], actual: 40 });
  }
  previewSettings.fromStored = true;
});
