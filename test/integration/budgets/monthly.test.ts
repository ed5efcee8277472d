import { setClock } from '../../../src/clock';
import { Harness, startHarness } from '../../support/harness';
import { createTask, logTime } from '../../support/fixtures';
import { TOTAL, budgetOf, budgetedProject, crossingsAfter } from './support';

/*
 * Monthly budgets count the months of the project's time zone, and a new month re-arms them
 * (docs/finance-rules.md R28.2, R28.4). The service clock (src/clock.ts) is moved as the midnight tests
 * move it. Pacific/Auckland is UTC+13 until 5 April 2026: 23:30 there on 31 March is 10:30 UTC, and
 * 00:30 on 1 April is 11:30 UTC on 31 March. Dev costs 100.00 an hour.
 */
let h: Harness;
beforeAll(async () => {
  setClock(new Date('2026-03-31T10:00:00Z')); // 23:00 on 31 March in Auckland
  h = await startHarness();
});
afterAll(async () => {
  setClock(undefined);
  await h.close();
});

const MARCH = { kind: 'month', from: '2026-03-01', to: '2026-03-31' };
const APRIL = { kind: 'month', from: '2026-04-01', to: '2026-04-30' };

it('counts the logs of the month in the project zone, without fixed costs, and re-arms in a new month', async () => {
  const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_period: 'month', budget_alerts: [100] }, 'Pacific/Auckland');
  await logTime(h.api, task.id, ann.id, { seconds: 6 * 3600, logged_at: '2026-03-31T10:30:00Z' }); // 23:30, 31 March: March
  await logTime(h.api, task.id, ann.id, { seconds: 5 * 3600, logged_at: '2026-03-31T11:30:00Z' }); // 00:30, 1 April: April
  await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 5000 }).expect(200); // not in a monthly budget
  // By UTC months March would hold 1100; in Auckland it holds 600.
  expect(await crossingsAfter(h.api, project.id)).toEqual([]);
  expect(await budgetOf(h.api, project.id)).toEqual({
    project_id: project.id,
    currency: 'USD',
    period: MARCH,
    money: { budget: 1000, spent: 600, remaining: 400, percent_used: 60 },
    hours: { budget: null, spent: 6, remaining: null, percent_used: null },
    alerts: [{ kind: 'money', percent: 100, crossed: false, crossed_at: null }],
  });
  expect(await budgetOf(h.api, project.id, '2026-04')).toMatchObject({ period: APRIL, money: { spent: 500, remaining: 500, percent_used: 50 } });

  // 23:45 on 31 March, 4 h: March reaches 1000.
  await logTime(h.api, task.id, ann.id, { seconds: 4 * 3600, logged_at: '2026-03-31T10:45:00Z' });
  expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1000, period: MARCH }]);
  // 00:40 on 1 April, 5 h: April holds 1000, but it is still March in Auckland: nothing yet.
  await logTime(h.api, task.id, ann.id, { seconds: 5 * 3600, logged_at: '2026-03-31T11:40:00Z' });
  expect((await crossingsAfter(h.api, project.id)).length).toBe(1);

  // Midnight in Auckland: April's thresholds are armed, and the first write after it records April's crossing.
  setClock(new Date('2026-03-31T11:00:01Z'));
  await createTask(h.api, project.id, { name: 'After midnight' });
  expect(await crossingsAfter(h.api, project.id)).toEqual([
    { project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1000, period: MARCH },
    { project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1000, period: APRIL },
  ]);
  const april = await budgetOf(h.api, project.id);
  expect(april).toMatchObject({ period: APRIL, money: { spent: 1000, remaining: 0, percent_used: 100 }, hours: { spent: 10 } });
  expect(april.alerts).toEqual([{ kind: 'money', percent: 100, crossed: true, crossed_at: '2026-03-31T11:00:01.000Z' }]);
  // March keeps its crossing as history.
  expect((await budgetOf(h.api, project.id, '2026-03')).alerts).toEqual([{ kind: 'money', percent: 100, crossed: true, crossed_at: expect.any(String) }]);
  expect((await crossingsAfter(h.api, project.id)).length).toBe(2);
});

it('records a crossing that came with no write at the first budget read, once', async () => {
  setClock(new Date('2031-05-10T23:59:00Z'));
  const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [100] });
  await logTime(h.api, task.id, ann.id, { seconds: 8 * 3600, logged_at: '2031-05-10T20:00:00Z' }); // 800
  await budgetOf(h.api, project.id); // the log settled (far enough from 1000 to have waited)
  // A rate written straight into the table (as the midnight tests do): 125 from 2031-05-10. No write
  // through the service, so nothing evaluated: 8 x 125 = 1000.
  await h.db('project_rate_cards').insert({ team_id: h.teamId, project_id: project.id, job_role_id: role.id, effective_from: '2031-05-10', hourly_rate: '125' });
  expect(await crossingsAfter(h.api, project.id)).toEqual([]);
  setClock(new Date('2031-05-11T00:00:01Z'));
  expect(await budgetOf(h.api, project.id)).toMatchObject({ money: { spent: 1000, percent_used: 100 }, alerts: [{ percent: 100, crossed: true }] });
  await budgetOf(h.api, project.id);
  expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1000, period: TOTAL }]);
});

it('finds a change made without a write at the first write of the next day', async () => {
  setClock(new Date('2031-06-10T12:00:00Z'));
  const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [100] });
  await logTime(h.api, task.id, ann.id, { seconds: 8 * 3600, logged_at: '2031-06-10T08:00:00Z' }); // 800
  // 125 from 2031-06-01, stored without the service: 8 x 125 = 1000, unknown to the day's basis.
  await h.db('project_rate_cards').insert({ team_id: h.teamId, project_id: project.id, job_role_id: role.id, effective_from: '2031-06-01', hourly_rate: '125' });
  setClock(new Date('2031-06-11T00:00:01Z'));
  // The day's first write computes the whole project: 8.01 h x 125 = 1001.25.
  await logTime(h.api, task.id, ann.id, { seconds: 36, logged_at: '2031-06-10T09:00:00Z' });
  expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1001.25, period: TOTAL }]);
});
