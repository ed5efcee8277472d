import { setClock, today } from '../../../src/clock';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, projectWithMember, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * "Today" is the service process's clock (src/clock.ts; libfaketime moves it too), never the database
 * server's, taken in the project's time zone (docs/finance-rules.md R16.1 and R16.2). A rate or a role that
 * takes effect tomorrow changes the breakdown and the list when the clock passes midnight in that zone,
 * with no write in between: today's rate and role change, and time logged before midnight stays costed
 * at the rate of its own day.
 */
let h: Harness;
beforeAll(async () => {
  setClock(new Date('2031-05-10T23:59:00Z'));
  h = await startHarness();
});
afterAll(async () => {
  setClock(undefined);
  await h.close();
});

it('changes a breakdown and a list at midnight (UTC) when a rate dated tomorrow takes effect', async () => {
  const { role, project, member: ann } = await projectWithMember(h.api, 100, 'Ann');
  const task = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [ann.id] });
  await logTime(h.api, task.id, ann.id, { seconds: 3600 }); // logged now: 2031-05-10 23:59 UTC
  const listPath = `/api/project-finance/project/${project.id}/tasks`;
  const breakdownPath = `/api/project-finance/task/${task.id}/breakdown`;

  // A rate from tomorrow, written straight into the table (no write through the service bumps anything).
  await h.db('project_rate_cards').insert({
    team_id: h.teamId,
    project_id: project.id,
    job_role_id: role.id,
    effective_from: '2031-05-11',
    hourly_rate: '150',
  });

  // Before midnight: 2 h and 1 h at 100.
  expect(today()).toBe('2031-05-10');
  const before = (await h.api.get(listPath).expect(200)).body.body;
  expect(before.tasks[0]).toMatchObject({ estimated_labor_cost: 200, actual_labor_cost: 100 });
  expect((await h.api.get(breakdownPath).expect(200)).body.body.task).toMatchObject({ estimated_labor_cost: 200, actual_labor_cost: 100 });
  await expectProjectMatchesOracle(h, project.id);

  // One second past midnight, nothing written: the estimate at today's 150 (2 h -> 300.00); the hour
  // logged yesterday stays at yesterday's 100.
  setClock(new Date('2031-05-11T00:00:01Z'));
  const after = (await h.api.get(listPath).expect(200)).body.body;
  expect(after.tasks[0]).toMatchObject({ estimated_labor_cost: 300, actual_labor_cost: 100 });
  expect(after.totals).toMatchObject({ estimated_labor_cost: 300, actual_labor_cost: 100, variance: 200 });
  const breakdown = (await h.api.get(breakdownPath).expect(200)).body.body;
  expect(breakdown.task).toMatchObject({ estimated_labor_cost: 300, actual_labor_cost: 100 });
  expect(breakdown.members[0]).toMatchObject({
    hourly_rate: 150,
    estimated_cost: 300,
    actual_cost: 100,
    cost_lines: [{ job_role: role.name, hourly_rate: 100, bill_rate: 0, logged_hours: 1, actual_cost: 100, actual_revenue: 0, first_day: '2031-05-10', last_day: '2031-05-10' }],
  });
  const rateCard = (await h.api.get(`/api/projects/${project.id}/rate-card`).expect(200)).body.body;
  expect(rateCard).toMatchObject({ date: '2031-05-11', roles: [expect.objectContaining({ job_role_id: role.id, hourly_rate: 150 })] });
  await expectProjectMatchesOracle(h, project.id);

  // An hour logged today is a second cost line, at 150.
  await logTime(h.api, task.id, ann.id, { seconds: 3600 });
  expect((await h.api.get(breakdownPath).expect(200)).body.body.members[0].cost_lines).toEqual([
    { job_role: role.name, hourly_rate: 100, bill_rate: 0, logged_hours: 1, actual_cost: 100, actual_revenue: 0, first_day: '2031-05-10', last_day: '2031-05-10' },
    { job_role: role.name, hourly_rate: 150, bill_rate: 0, logged_hours: 1, actual_cost: 150, actual_revenue: 0, first_day: '2031-05-11', last_day: '2031-05-11' },
  ]);
  await expectProjectMatchesOracle(h, project.id);

  // And back before midnight (a clock set back): the old rate again for the estimate.
  setClock(new Date('2031-05-10T12:00:00Z'));
  expect((await h.api.get(listPath).expect(200)).body.body.tasks[0]).toMatchObject({ estimated_labor_cost: 200 });
});

it('changes today\'s rate and role at midnight in the project\'s time zone, not at midnight UTC', async () => {
  // Pacific/Auckland is UTC+12 in May (no daylight saving): its midnight of 2031-05-11 is 2031-05-10T12:00Z.
  setClock(new Date('2031-05-10T11:59:00Z'));
  const dev = await createJobRole(h.api);
  const lead = await createJobRole(h.api);
  const project = await createProject(h.api);
  await h.api.patch(`/api/projects/${project.id}`, { time_zone: 'Pacific/Auckland' }).expect(200);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 100 }, { job_role_id: lead.id, hourly_rate: 130 }]);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 110 }, { job_role_id: lead.id, hourly_rate: 130 }], '2031-05-11');
  const ann = await createMember(h.api, { name: 'Ann' });
  const bo = await createMember(h.api, { name: 'Bo' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await addToProject(h.api, project.id, bo.id, dev.id);
  // Bo becomes a lead from tomorrow (Auckland), through the API.
  await h.api.put(`/api/projects/${project.id}/members/${bo.id}`, { job_role_id: lead.id, effective_from: '2031-05-11' }).expect(200);
  const task = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [ann.id, bo.id] });
  const breakdownPath = `/api/project-finance/task/${task.id}/breakdown`;
  const listPath = `/api/project-finance/project/${project.id}/tasks`;

  // 23:59 in Auckland on 2031-05-10: both developers at 100, 2 h each -> 200.00 + 200.00.
  let breakdown = (await h.api.get(breakdownPath).expect(200)).body.body;
  expect(breakdown.members.map((m: { name: string; job_title_name: string; hourly_rate: number; estimated_cost: number }) => [m.name, m.job_title_name, m.hourly_rate, m.estimated_cost])).toEqual([
    ['Ann', dev.name, 100, 200],
    ['Bo', dev.name, 100, 200],
  ]);
  expect((await h.api.get(listPath).expect(200)).body.body.totals).toMatchObject({ estimated_labor_cost: 400 });

  // One minute later it is 2031-05-11 in Auckland (still 2031-05-10 in UTC): Ann at the raised 110
  // (220.00), Bo a lead at 130 (260.00); nothing was written.
  setClock(new Date('2031-05-10T12:00:30Z'));
  expect(today()).toBe('2031-05-10');
  breakdown = (await h.api.get(breakdownPath).expect(200)).body.body;
  expect(breakdown.members.map((m: { name: string; job_title_name: string; hourly_rate: number; estimated_cost: number }) => [m.name, m.job_title_name, m.hourly_rate, m.estimated_cost])).toEqual([
    ['Ann', dev.name, 110, 220],
    ['Bo', lead.name, 130, 260],
  ]);
  expect(breakdown.grouped_members.map((g: { jobRole: string }) => g.jobRole)).toEqual([dev.name, lead.name].sort());
  expect((await h.api.get(listPath).expect(200)).body.body.totals).toMatchObject({ estimated_labor_cost: 480 });
  expect((await h.api.get(`/api/projects/${project.id}/rate-card`).expect(200)).body.body.date).toBe('2031-05-11');
});

it("changes a member's role at midnight when only the role is dated tomorrow (no rate changes that day)", async () => {
  // The stored figures were computed before midnight; at midnight only a role entry takes effect.
  setClock(new Date('2031-05-10T23:59:00Z'));
  const dev = await createJobRole(h.api);
  const lead = await createJobRole(h.api);
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 100 }, { job_role_id: lead.id, hourly_rate: 130 }]);
  const cy = await createMember(h.api, { name: 'Cy' });
  await addToProject(h.api, project.id, cy.id, dev.id);
  await h.api.put(`/api/projects/${project.id}/members/${cy.id}`, { job_role_id: lead.id, effective_from: '2031-05-11' }).expect(200);
  const task = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [cy.id] });
  await logTime(h.api, task.id, cy.id, { seconds: 3600 }); // 2031-05-10 23:59 UTC, a developer's hour
  const listPath = `/api/project-finance/project/${project.id}/tasks`;

  // Before midnight: 2 h estimated and 1 h logged at the developer's 100.
  expect((await h.api.get(listPath).expect(200)).body.body.tasks[0]).toMatchObject({ estimated_labor_cost: 200, actual_labor_cost: 100 });
  await expectProjectMatchesOracle(h, project.id);

  // Past midnight, nothing written: a lead at 130 today (2 h -> 260.00); yesterday's hour stays at 100.
  setClock(new Date('2031-05-11T00:00:01Z'));
  expect((await h.api.get(listPath).expect(200)).body.body.tasks[0]).toMatchObject({ estimated_labor_cost: 260, actual_labor_cost: 100 });
  const member = (await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200)).body.body.members[0];
  expect(member).toMatchObject({ job_title_name: lead.name, hourly_rate: 130, estimated_cost: 260, actual_cost: 100 });
  await expectProjectMatchesOracle(h, project.id);
});
