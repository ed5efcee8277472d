import { setClock, today } from '../../../src/clock';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { oracleBreakdown, oracleList, readInputs } from '../../support/oracle';
import { expectProjectMatchesOracle } from './check';

/*
 * "Today" is the service process's clock (src/clock.ts; libfaketime moves it too), never the database
 * server's. A rate that takes effect tomorrow changes the breakdown and the list when the clock passes
 * midnight, with no write in between.
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

it('changes a breakdown and a list at midnight when a rate dated tomorrow takes effect', async () => {
  const role = await createJobRole(h.api);
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 100 }]);
  const ann = await createMember(h.api, { name: 'Ann' });
  await addToProject(h.api, project.id, ann.id, role.id);
  const task = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [ann.id] });
  await logTime(h.api, task.id, ann.id, { seconds: 3600 });
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

  // One second past midnight (UTC), nothing written: 2 h and 1 h at 150.
  setClock(new Date('2031-05-11T00:00:01Z'));
  const after = (await h.api.get(listPath).expect(200)).body.body;
  expect(after.tasks[0]).toMatchObject({ estimated_labor_cost: 300, actual_labor_cost: 150 });
  expect(after.totals).toMatchObject({ estimated_labor_cost: 300, actual_labor_cost: 150, variance: 150 });
  const breakdown = (await h.api.get(breakdownPath).expect(200)).body.body;
  expect(breakdown.task).toMatchObject({ estimated_labor_cost: 300, actual_labor_cost: 150 });
  expect(breakdown.members[0]).toMatchObject({ hourly_rate: 150, estimated_cost: 300, actual_cost: 150 });
  const rateCard = (await h.api.get(`/api/projects/${project.id}/rate-card`).expect(200)).body.body;
  expect(rateCard.roles).toEqual([expect.objectContaining({ job_role_id: role.id, hourly_rate: 150 })]);
  const inputs = await readInputs(h.db, h.teamId, project.id, '2031-05-11');
  expect(after).toEqual(oracleList(inputs, 'all'));
  expect(breakdown).toEqual(oracleBreakdown(inputs, task.id, false));
  await expectProjectMatchesOracle(h, project.id);

  // And back before midnight (a clock set back): the old rate again.
  setClock(new Date('2031-05-10T12:00:00Z'));
  expect((await h.api.get(listPath).expect(200)).body.body.tasks[0]).toMatchObject({ estimated_labor_cost: 200 });
  await expectProjectMatchesOracle(h, project.id);
});
