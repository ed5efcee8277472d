import request from 'supertest';
import { createApp } from '../../../src/app';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';
import { createTask, logTime, projectWithMember, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * With refreshBehindBreakdowns (on in server.ts), a breakdown that finds its project's stored figures
 * out of date answers from the calculator and then brings the project current, so later breakdowns
 * are read from stored figures again without waiting for a list read.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const stampCurrent = async (projectId: string) => {
  const row = await h.db('projects as p')
    .join('project_figures as f', function join() {
      this.on('f.team_id', 'p.team_id').andOn('f.project_id', 'p.id');
    })
    .where({ 'p.team_id': h.teamId, 'p.id': projectId })
    .first('p.revision', 'f.revision as stamped');
  const marks = await h.db('stale_tasks').where({ team_id: h.teamId, project_id: projectId }).count<{ n: string }[]>({ n: '*' });
  return row !== undefined && Number(row.revision) === Number(row.stamped) && Number(marks[0]?.n) === 0;
};

/** A project at 50 an hour with one member, Ann, assigned to its one task of 4 hours. */
async function projectWithTask() {
  const { role, project, member: ann } = await projectWithMember(h.api, 50, 'Ann');
  const task = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [ann.id] });
  return { role, project, ann, task };
}

// First: the other test's refresh starts background work (the parts filler after a project-wide
// refresh) that may bring this project current too, whatever the setting.
it('leaves the project as it is without the setting (what the other tests rely on)', async () => {
  const { project, task } = await projectWithTask();
  await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
  await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
  expect(await stampCurrent(project.id)).toBe(false);
});

it('brings the project current behind a breakdown that found it out of date', async () => {
  const { role, project, ann, task } = await projectWithTask();
  await logTime(h.api, task.id, ann.id, { seconds: 3600 });
  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  expect(await stampCurrent(project.id)).toBe(true);

  await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 70 }]);
  expect(await stampCurrent(project.id)).toBe(false);
  const app = createApp({ db: h.db, logger: createLogger('silent'), refreshBehindBreakdowns: true });
  const res = await request(app).get(`/api/project-finance/task/${task.id}/breakdown`).set('Authorization', `Bearer ${h.api.token}`).expect(200);
  expect(res.body.body.task.actual_labor_cost).toBe(70);
  // No list is read: only the breakdown's refresh can make the stamp current (polled, no fixed wait).
  while (!(await stampCurrent(project.id))) await new Promise((resolve) => setTimeout(resolve, 20));
  await expectProjectMatchesOracle(h, project.id);
});
