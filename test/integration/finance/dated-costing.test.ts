import { setClock } from '../../../src/clock';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, breakdown, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { oracleBreakdown, oracleList, readInputs } from '../../support/oracle';
import { expectProjectMatchesOracle } from '../figures/check';

/*
 * docs/finance-rules.md R15-R17 by hand: dated rates and roles, cost lines per (role, rate) of each log's day in
 * the project's time zone, today's rate for estimates, date ranges. Every expected figure is worked out
 * in the comments; every project is also compared with the independent oracle (test/support/oracle.ts).
 * Today is 2026-11-20 (the service clock, set).
 */
let h: Harness;
beforeAll(async () => {
  setClock(new Date('2026-11-20T12:00:00Z'));
  h = await startHarness();
});
afterAll(async () => {
  setClock(undefined);
  await h.close();
});

type Line = { job_role: string; hourly_rate: number; bill_rate: number; logged_hours: number; actual_cost: number; actual_revenue: number; first_day: string; last_day: string };
type Member = { name: string; job_title_name: string; hourly_rate: number; estimated_hours: number; logged_hours: number; estimated_cost: number; actual_cost: number; cost_lines: Line[] };

const memberOf = async (taskId: string, name: string, query = '') => {
  const res = await h.api.get(`/api/project-finance/task/${taskId}/breakdown${query}`).expect(200);
  return (res.body.body.members as Member[]).find((m) => m.name === name) as Member;
};

/** A project with Dev at 50.00/h from the beginning, raised to 60.00/h from 2026-07-01, and Lead at 100.00/h. */
async function raisedProject(fields: { currency?: string } = {}) {
  const project = await createProject(h.api, fields);
  const dev = await createJobRole(h.api);
  const lead = await createJobRole(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 50 }, { job_role_id: lead.id, hourly_rate: 100 }]);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 60 }, { job_role_id: lead.id, hourly_rate: 100 }], '2026-07-01');
  return { project, dev, lead };
}

it('costs work before a raise at the old rate and after it at the new one, in two cost lines; the estimate at today\'s rate', async () => {
  const { project, dev } = await raisedProject();
  const ann = await createMember(h.api, { name: 'Ann' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  const task = await createTask(h.api, project.id, { estimated_hours: 10, assignee_ids: [ann.id] });
  await logTime(h.api, task.id, ann.id, { hours: 3, logged_at: '2026-06-10T09:00:00Z' });
  await logTime(h.api, task.id, ann.id, { hours: 2, logged_at: '2026-07-02T09:00:00Z' });
  await logTime(h.api, task.id, ann.id, { hours: 1.5, logged_at: '2026-07-03T09:00:00Z' });

  // June: 3 h x 50 = 150.00. July: 3.5 h x 60 = 210.00. Actual 360.00 over 6.5 h; estimate 10 h x 60 (today) = 600.00.
  const b = (await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200)).body.body;
  expect(b.task).toMatchObject({ estimated_hours: 10, logged_hours: 6.5, estimated_labor_cost: 600, actual_labor_cost: 360 });
  expect(b.members[0]).toMatchObject({ hourly_rate: 60, estimated_cost: 600, logged_hours: 6.5, actual_cost: 360 });
  expect(b.members[0].cost_lines).toEqual([
    { job_role: dev.name, hourly_rate: 50, bill_rate: 0, logged_hours: 3, actual_cost: 150, actual_revenue: 0, first_day: '2026-06-10', last_day: '2026-06-10' },
    { job_role: dev.name, hourly_rate: 60, bill_rate: 0, logged_hours: 3.5, actual_cost: 210, actual_revenue: 0, first_day: '2026-07-02', last_day: '2026-07-03' },
  ]);
  // The grouped entry carries the same lines.
  expect(b.grouped_members[0].members[0].cost_lines).toEqual(b.members[0].cost_lines);

  // A range cutting the July line: from 2026-07-03, only 1.5 h x 60 = 90.00 counts; the estimate stays.
  const cut = await memberOf(task.id, 'Ann', '?from=2026-07-03');
  expect(cut).toMatchObject({ estimated_cost: 600, logged_hours: 1.5, actual_cost: 90 });
  expect(cut.cost_lines).toEqual([{ job_role: dev.name, hourly_rate: 60, bill_rate: 0, logged_hours: 1.5, actual_cost: 90, actual_revenue: 0, first_day: '2026-07-03', last_day: '2026-07-03' }]);
  // Up to 2026-06-30: the June line alone.
  expect((await memberOf(task.id, 'Ann', '?to=2026-06-30')).cost_lines).toEqual([
    { job_role: dev.name, hourly_rate: 50, bill_rate: 0, logged_hours: 3, actual_cost: 150, actual_revenue: 0, first_day: '2026-06-10', last_day: '2026-06-10' },
  ]);
  // The list with the same range: the row's actuals are the range's, its estimate today's.
  const list = (await h.api.get(`/api/project-finance/project/${project.id}/tasks?from=2026-07-03&to=2026-12-31`).expect(200)).body.body;
  expect(list.tasks[0]).toMatchObject({ estimated_labor_cost: 600, logged_hours: 1.5, actual_labor_cost: 90, variance: 510 });
  expect(list.totals).toMatchObject({ logged_hours: 1.5, actual_labor_cost: 90 });
  const ranged = await readInputs(h.db, h.teamId, project.id, undefined, { from: '2026-07-03', to: '2026-12-31' });
  expect(list).toEqual(oracleList(ranged, 'all'));
  expect((await h.api.get(`/api/project-finance/task/${task.id}/breakdown?from=2026-07-03&to=2026-12-31`).expect(200)).body.body).toEqual(
    oracleBreakdown(ranged, task.id, false),
  );
  await expectProjectMatchesOracle(h, project.id);
});

it('costs a member promoted mid-task at each day\'s role, grouped today under the new role', async () => {
  const { project, dev, lead } = await raisedProject();
  const bo = await createMember(h.api, { name: 'Bo' });
  await addToProject(h.api, project.id, bo.id, dev.id);
  const promoted = await h.api.put(`/api/projects/${project.id}/members/${bo.id}`, { job_role_id: lead.id, effective_from: '2026-07-03' }).expect(200);
  expect(promoted.body.body).toMatchObject({
    job_role_id: lead.id,
    roles: [
      { job_role_id: dev.id, job_role_name: dev.name, effective_from: '1970-01-01' },
      { job_role_id: lead.id, job_role_name: lead.name, effective_from: '2026-07-03' },
    ],
  });
  const task = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [bo.id] });
  await logTime(h.api, task.id, bo.id, { hours: 1, logged_at: '2026-06-01T10:00:00Z' });
  await logTime(h.api, task.id, bo.id, { hours: 1, logged_at: '2026-07-02T10:00:00Z' });
  await logTime(h.api, task.id, bo.id, { hours: 2, logged_at: '2026-07-03T10:00:00Z' });

  // 06-01 Dev at 50: 50.00; 07-02 Dev at 60: 60.00; 07-03 Lead at 100: 2 h -> 200.00. Actual 310.00.
  // Today Bo is a Lead at 100: estimate 4 h -> 400.00, grouped under Lead.
  const b = (await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200)).body.body;
  expect(b.members[0]).toMatchObject({ job_title_name: lead.name, hourly_rate: 100, estimated_cost: 400, logged_hours: 4, actual_cost: 310 });
  expect(b.members[0].cost_lines).toEqual([
    { job_role: dev.name, hourly_rate: 50, bill_rate: 0, logged_hours: 1, actual_cost: 50, actual_revenue: 0, first_day: '2026-06-01', last_day: '2026-06-01' },
    { job_role: dev.name, hourly_rate: 60, bill_rate: 0, logged_hours: 1, actual_cost: 60, actual_revenue: 0, first_day: '2026-07-02', last_day: '2026-07-02' },
    { job_role: lead.name, hourly_rate: 100, bill_rate: 0, logged_hours: 2, actual_cost: 200, actual_revenue: 0, first_day: '2026-07-03', last_day: '2026-07-03' },
  ]);
  expect(b.grouped_members.map((g: { jobRole: string }) => g.jobRole)).toEqual([lead.name]);
  // Members list: today's role, and the history.
  const members = (await h.api.get(`/api/projects/${project.id}/members`).expect(200)).body.body;
  expect(members[0]).toMatchObject({ job_role_id: lead.id, job_role_name: lead.name });
  await expectProjectMatchesOracle(h, project.id);
});

it('takes a log\'s day in the project\'s time zone: 23:30 UTC is the next day in Pacific/Auckland', async () => {
  const dev = await createJobRole(h.api);
  const costs: Record<string, unknown> = {};
  for (const zone of ['Pacific/Auckland', 'UTC']) {
    const project = await createProject(h.api);
    await h.api.patch(`/api/projects/${project.id}`, { time_zone: zone }).expect(200);
    await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 50 }]);
    await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 80 }], '2026-03-02');
    const cy = await createMember(h.api, { name: `Cy ${zone}` });
    await addToProject(h.api, project.id, cy.id, dev.id);
    const task = await createTask(h.api, project.id, { assignee_ids: [cy.id] });
    await logTime(h.api, task.id, cy.id, { hours: 1, logged_at: '2026-03-01T23:30:00Z' });
    costs[zone] = (await memberOf(task.id, `Cy ${zone}`)).cost_lines;
    await expectProjectMatchesOracle(h, project.id);
  }
  // Auckland is UTC+13 on 1 March 2026 (daylight saving): 12:30 on 2 March, the day the 80.00 rate starts.
  expect(costs['Pacific/Auckland']).toEqual([{ job_role: dev.name, hourly_rate: 80, bill_rate: 0, logged_hours: 1, actual_cost: 80, actual_revenue: 0, first_day: '2026-03-02', last_day: '2026-03-02' }]);
  expect(costs.UTC).toEqual([{ job_role: dev.name, hourly_rate: 50, bill_rate: 0, logged_hours: 1, actual_cost: 50, actual_revenue: 0, first_day: '2026-03-01', last_day: '2026-03-01' }]);
});

it('re-dates every log when the project\'s time zone changes', async () => {
  const dev = await createJobRole(h.api);
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 50 }]);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 80 }], '2026-03-02');
  const di = await createMember(h.api, { name: 'Di' });
  await addToProject(h.api, project.id, di.id, dev.id);
  const task = await createTask(h.api, project.id, { assignee_ids: [di.id] });
  await logTime(h.api, task.id, di.id, { hours: 1, logged_at: '2026-03-01T23:30:00Z' });
  expect((await memberOf(task.id, 'Di')).actual_cost).toBe(50); // UTC: 1 March
  await h.api.patch(`/api/projects/${project.id}`, { time_zone: 'Pacific/Auckland' }).expect(200);
  expect((await memberOf(task.id, 'Di')).cost_lines).toEqual([
    { job_role: dev.name, hourly_rate: 80, bill_rate: 0, logged_hours: 1, actual_cost: 80, actual_revenue: 0, first_day: '2026-03-02', last_day: '2026-03-02' },
  ]);
  await expectProjectMatchesOracle(h, project.id);
});

it('rounds each cost line to the yen, to the fils and to the ten-thousandth of a Unidad de Fomento', async () => {
  for (const [currency, rates, expected] of [
    // JPY: 3333/h, then 3500/h from 2026-05-01. 1234 s = 0.34 h x 3333 = 1133.22 -> 1133; 2000 s = 0.56 h x 3500 = 1960.
    ['JPY', [3333, 3500], { lines: [1133, 1960], actual: 3093 }],
    // KWD: 12.345/h, then 13.5/h. 0.34 h x 12.345 = 4.1973 -> 4.197; 0.56 h x 13.5 = 7.56.
    ['KWD', [12.345, 13.5], { lines: [4.197, 7.56], actual: 11.757 }],
    // CLF (4 decimals): 1.2345/h, then 1.5/h. 0.34 h x 1.2345 = 0.41973 -> 0.4197; 0.56 h x 1.5 = 0.84.
    ['CLF', [1.2345, 1.5], { lines: [0.4197, 0.84], actual: 1.2597 }],
  ] as const) {
    const project = await createProject(h.api, { currency });
    const role = await createJobRole(h.api);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: rates[0] }]);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: rates[1] }], '2026-05-01');
    const eve = await createMember(h.api, { name: `Eve ${currency}` });
    await addToProject(h.api, project.id, eve.id, role.id);
    const task = await createTask(h.api, project.id, { assignee_ids: [eve.id] });
    await logTime(h.api, task.id, eve.id, { seconds: 1234, logged_at: '2026-04-30T12:00:00Z' });
    await logTime(h.api, task.id, eve.id, { seconds: 2000, logged_at: '2026-05-02T12:00:00Z' });
    const member = await memberOf(task.id, `Eve ${currency}`);
    expect(member.cost_lines.map((l) => l.actual_cost)).toEqual(expected.lines);
    expect(member.actual_cost).toBe(expected.actual);
    await expectProjectMatchesOracle(h, project.id);
  }
});

it('keeps rate-card history: the card on a date, and who wrote each entry when', async () => {
  const { project, dev, lead } = await raisedProject();
  const card = async (date: string) => (await h.api.get(`/api/projects/${project.id}/rate-card?date=${date}`).expect(200)).body.body;
  // Roles by name: Dev at 50.00 and Lead at 100.00 on 30 June.
  const byName = [dev, lead].sort((a, b) => (a.name < b.name ? -1 : 1));
  expect((await card('2026-06-30')).roles.map((r: { job_role_id: string; hourly_rate: number }) => [r.job_role_id, r.hourly_rate])).toEqual(
    byName.map((role) => [role.id, role.id === dev.id ? 50 : 100]),
  );
  expect((await card('2026-07-01')).roles.find((r: { job_role_id: string }) => r.job_role_id === dev.id)).toMatchObject({ hourly_rate: 60, effective_from: '2026-07-01' });
  // Lead left out from 2026-09-01: no rate from that day, an entry with a null rate in the history.
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 60 }], '2026-09-01');
  expect((await card('2026-09-01')).roles.map((r: { job_role_id: string }) => r.job_role_id)).toEqual([dev.id]);
  expect((await card('2026-08-31')).roles).toHaveLength(2);
  const history = (await h.api.get(`/api/projects/${project.id}/rate-card/history`).expect(200)).body.body.entries;
  const leadEntries = history.filter((e: { job_role_id: string }) => e.job_role_id === lead.id);
  expect(leadEntries.map((e: { effective_from: string; hourly_rate: number | null }) => [e.effective_from, e.hourly_rate])).toEqual([
    ['1970-01-01', 100],
    ['2026-07-01', 100],
    ['2026-09-01', null],
  ]);
  const tokenName = (await h.api.get('/api/session').expect(200)).body.body.token.name;
  for (const entry of history) expect(entry).toMatchObject({ written_by: tokenName, written_at: expect.any(String) });
});

it('costs a log whose day falls before 1970 in the project\'s time zone at the member\'s first role, with no rate yet', async () => {
  // 1970-01-01T05:00Z is 1969-12-31 21:00 in Los Angeles. Rule 3: Gus's first role (Dev) counts from
  // the beginning of time; rule 2: Dev's first rate entry is dated 1970-01-01, so on 1969-12-31 Dev
  // has no rate: 1 h x 0 = 0.00. The log of 1970-01-02 is Dev at 50: 2 h x 50 = 100.00.
  const project = await createProject(h.api, { time_zone: 'America/Los_Angeles' });
  const dev = await createJobRole(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 50 }]);
  const gus = await createMember(h.api, { name: 'Gus' });
  await addToProject(h.api, project.id, gus.id, dev.id);
  const task = await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [gus.id] });
  await logTime(h.api, task.id, gus.id, { hours: 1, logged_at: '1970-01-01T05:00:00Z' });
  await logTime(h.api, task.id, gus.id, { hours: 2, logged_at: '1970-01-02T20:00:00Z' });
  const member = await memberOf(task.id, 'Gus');
  expect(member.cost_lines).toEqual([
    { job_role: dev.name, hourly_rate: 0, bill_rate: 0, logged_hours: 1, actual_cost: 0, actual_revenue: 0, first_day: '1969-12-31', last_day: '1969-12-31' },
    { job_role: dev.name, hourly_rate: 50, bill_rate: 0, logged_hours: 2, actual_cost: 100, actual_revenue: 0, first_day: '1970-01-02', last_day: '1970-01-02' },
  ]);
  expect(member).toMatchObject({ job_title_name: dev.name, logged_hours: 3, actual_cost: 100 });
  // A range can reach that day (the first a log can fall on) and no earlier one.
  expect((await memberOf(task.id, 'Gus', '?to=1969-12-31')).cost_lines).toEqual([
    { job_role: dev.name, hourly_rate: 0, bill_rate: 0, logged_hours: 1, actual_cost: 0, actual_revenue: 0, first_day: '1969-12-31', last_day: '1969-12-31' },
  ]);
  await h.api.get(`/api/project-finance/task/${task.id}/breakdown?from=1969-12-30`).expect(400);
  await expectProjectMatchesOracle(h, project.id);
});

it('answers 400 for a bad date, a range out of order, an unknown time zone and a log before 1970', async () => {
  const { project } = await raisedProject();
  const task = await createTask(h.api, project.id, {});
  const member = await createMember(h.api, { name: 'Fay' });
  await addToProject(h.api, project.id, member.id, null);
  const bad = async (res: Promise<{ status: number; body: { error: { code: string; details?: { path: string }[] } } }>, path: string) => {
    const reply = await res;
    expect({ status: reply.status, code: reply.body.error.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    expect(reply.body.error.details?.map((d) => d.path)).toContain(path);
  };
  await bad(h.api.get(`/api/project-finance/task/${task.id}/breakdown?from=2026-13-01`), 'from');
  await bad(h.api.get(`/api/project-finance/task/${task.id}/breakdown?from=2026-07-02&to=2026-07-01`), 'to');
  await bad(h.api.get(`/api/project-finance/project/${project.id}/tasks?to=yesterday`), 'to');
  await bad(h.api.get(`/api/project-finance/project/${project.id}/export?from=2026-02-29`), 'from');
  await bad(h.api.post('/api/projects', { name: 'Mars base', time_zone: 'Mars/Olympus_Mons' }), 'time_zone');
  await bad(h.api.patch(`/api/projects/${project.id}`, { time_zone: 'utc+1' }), 'time_zone');
  await bad(h.api.put(`/api/projects/${project.id}/members/${member.id}`, { job_role_id: null, effective_from: '2026-7-1' }), 'effective_from');
  await bad(h.api.post(`/api/tasks/${task.id}/time-logs`, { team_member_id: member.id, hours: 1, logged_at: '1969-12-31T23:59:59Z' }), 'logged_at');
});

it('breakdowns with subtasks merge a member\'s lines of the same role and rate across tasks', async () => {
  const { project, dev } = await raisedProject();
  const gus = await createMember(h.api, { name: 'Gus' });
  await addToProject(h.api, project.id, gus.id, dev.id);
  const parent = await createTask(h.api, project.id, { assignee_ids: [gus.id] });
  const child = await createTask(h.api, project.id, { assignee_ids: [gus.id], parent_task_id: parent.id });
  await logTime(h.api, parent.id, gus.id, { seconds: 1000, logged_at: '2026-06-01T10:00:00Z' }); // 0.28 h x 50 = 14.00
  await logTime(h.api, child.id, gus.id, { seconds: 1000, logged_at: '2026-06-05T10:00:00Z' }); // 0.28 h x 50 = 14.00
  await logTime(h.api, child.id, gus.id, { seconds: 3600, logged_at: '2026-08-01T10:00:00Z' }); // 1 h x 60 = 60.00
  const b = await breakdown(h.api, parent.id, true);
  // The two 50.00 lines: 0.28 + 0.28 = 0.56 h and 14.00 + 14.00 = 28.00 (each rounded on its task), 06-01 to 06-05.
  expect((b.members[0] as unknown as Member).cost_lines).toEqual([
    { job_role: dev.name, hourly_rate: 50, bill_rate: 0, logged_hours: 0.56, actual_cost: 28, actual_revenue: 0, first_day: '2026-06-01', last_day: '2026-06-05' },
    { job_role: dev.name, hourly_rate: 60, bill_rate: 0, logged_hours: 1, actual_cost: 60, actual_revenue: 0, first_day: '2026-08-01', last_day: '2026-08-01' },
  ]);
  await expectProjectMatchesOracle(h, project.id);
});
