import { setClock } from '../../../src/clock';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, breakdown, createJobRole, createMember, createProject, createTask, logTime } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * Never stale (docs/finance-rules.md R27.2): revenue, margin and the missing-rate warnings follow every
 * write of section 8 (a card's bill rate, a member's own rates, the project's unit) and midnight, after
 * the figures were stored and read. Each step is held to the oracle on every breakdown and list.
 */
let h: Harness;
beforeAll(async () => {
  setClock(new Date('2031-05-10T12:00:00Z'));
  h = await startHarness();
});
afterAll(async () => {
  setClock(undefined);
  await h.close();
});

type Row = { id: string; has_missing_rates: boolean; estimated_revenue: number; actual_revenue: number; estimated_margin: number; actual_margin: number };

async function rows(projectId: string): Promise<Map<string, Row>> {
  const body = (await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200)).body.body;
  return new Map(body.tasks.map((row: Row) => [row.id, row]));
}

it('follows a first bill rate, a member\'s own rates and one that takes effect at midnight', async () => {
  const project = await createProject(h.api);
  const dev = await createJobRole(h.api);
  const tester = await createJobRole(h.api);
  await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: dev.id, hourly_rate: 50 }, { job_role_id: tester.id, hourly_rate: 40 }], effective_from: '1970-01-01' }).expect(200);
  const ann = await createMember(h.api, { name: 'Ann' });
  const dan = await createMember(h.api, { name: 'Dan' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await addToProject(h.api, project.id, dan.id, tester.id);
  const build = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [ann.id] });
  const test = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [dan.id] });
  await logTime(h.api, build.id, ann.id, { hours: 1, logged_at: '2031-05-09T10:00:00Z' });
  // Stored and read: nobody bills, nothing is missing.
  expect((await rows(project.id)).get(test.id)).toMatchObject({ has_missing_rates: false, estimated_margin: -80 });
  await expectProjectMatchesOracle(h, project.id);

  // The project's first bill rate (the Developer's): Dan's task, which no Developer works on, now says
  // its Tester bills nothing (R25.2).
  await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }, { job_role_id: tester.id, hourly_rate: 40 }], effective_from: '1970-01-01' }).expect(200);
  const billed = await rows(project.id);
  expect(billed.get(test.id)).toMatchObject({ has_missing_rates: true, estimated_revenue: 0, estimated_margin: -80 });
  // Ann: 4 h x 80 = 320 estimated, 1 h x 80 = 80 earned; costs 200 and 50.
  expect(billed.get(build.id)).toMatchObject({ has_missing_rates: false, estimated_revenue: 320, actual_revenue: 80, estimated_margin: 120, actual_margin: 30 });
  expect((await breakdown(h.api, test.id)).warnings).toEqual([{ code: 'MISSING_BILL_RATE', team_member_id: dan.id, name: 'Dan' }]);
  await expectProjectMatchesOracle(h, project.id);

  // Dan's own bill rate from the beginning clears the warning; Ann's own bill rate of 90 from 1 May
  // re-bills her logged hour and her estimate.
  await h.api.put(`/api/projects/${project.id}/members/${dan.id}/rates`, { bill_rate: 60, effective_from: '1970-01-01' }).expect(200);
  await h.api.put(`/api/projects/${project.id}/members/${ann.id}/rates`, { bill_rate: 90, effective_from: '2031-05-01' }).expect(200);
  const own = await rows(project.id);
  expect(own.get(test.id)).toMatchObject({ has_missing_rates: false, estimated_revenue: 120, estimated_margin: 40 });
  expect(own.get(build.id)).toMatchObject({ estimated_revenue: 360, actual_revenue: 90, estimated_margin: 160, actual_margin: 40 });
  await expectProjectMatchesOracle(h, project.id);

  // Ann's own cost rate of 70 from tomorrow: nothing changes today...
  await h.api.put(`/api/projects/${project.id}/members/${ann.id}/rates`, { hourly_rate: 70, effective_from: '2031-05-11' }).expect(200);
  expect((await rows(project.id)).get(build.id)).toMatchObject({ estimated_margin: 160, actual_margin: 40 });
  // ...and at midnight, with nobody writing, her estimate costs 4 x 70 = 280 (margin 360 - 280 = 80);
  // her hour of 9 May keeps its 50.
  setClock(new Date('2031-05-11T00:00:01Z'));
  expect((await rows(project.id)).get(build.id)).toMatchObject({ estimated_revenue: 360, estimated_margin: 80, actual_margin: 40 });
  expect((await breakdown(h.api, build.id)).members[0]).toMatchObject({ hourly_rate: 70, cost_rate_source: 'member', bill_rate: 90, bill_rate_source: 'member' });
  await expectProjectMatchesOracle(h, project.id);
});

it('follows a change of the project\'s unit: member entries show day rates from then on', async () => {
  const project = await createProject(h.api);
  const ann = await createMember(h.api, { name: 'Ann' });
  await addToProject(h.api, project.id, ann.id, null);
  const task = await createTask(h.api, project.id, { estimated_hours: 3, assignee_ids: [ann.id] });
  expect((await breakdown(h.api, task.id)).members[0]).not.toHaveProperty('day_rate');
  await expectProjectMatchesOracle(h, project.id);
  await h.api.patch(`/api/projects/${project.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
  expect((await breakdown(h.api, task.id)).members[0]).toMatchObject({ hourly_rate: 0, day_rate: 0, bill_rate: 0, day_bill_rate: 0 });
  expect((await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.project).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
  await expectProjectMatchesOracle(h, project.id);
});
