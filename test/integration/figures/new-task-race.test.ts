import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * A refresh looks for tasks without stored figures (new ones) only when the project's revision moved
 * since its stamp, or when changed inputs are marked: a rename (or a rate or role change) committing
 * after the refresh read the revision, beside a task created just before it, leaves the refresh
 * seeing the old revision, equal to its stamp, and the new task among the renamed member's tasks
 * (whose estimates only are costed again, from stored figures the new task does not have). Here that
 * moment is set up by hand: the stamp is given the revision of the rename, as that refresh would have
 * read it. A new task is marked by its creation, and the refresh reads that mark; the second case
 * removes the mark by hand, as a refresh that read the marks just before the creation committed (and
 * the rename's mark just after) would not have it: the new task is then among the tasks whose
 * estimates only are to be costed again, without stored figures, and is computed in full.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

it('recomputes a new task in full when a rename marked after its creation meets a stamp of the same revision', async () => {
  const dev = await createJobRole(h.api, 'Developer');
  const project = await createProject(h.api);
  const ann = await createMember(h.api, { name: 'Ann' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [ann.id] });
  await expectProjectMatchesOracle(h, project.id);

  const created = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [ann.id] });
  await h.api.patch(`/api/team-members/${ann.id}`).send({ name: 'Anna' }).expect(200);
  const { revision } = await h.db('projects').where({ team_id: h.teamId, id: project.id }).first('revision');
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).update({ revision });
  const stored = () => h.db('task_labor').where({ team_id: h.teamId, task_id: created.id }).first('task_id');
  expect(await stored()).toBeUndefined();

  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  expect(await stored()).toEqual({ task_id: created.id });
  await expectProjectMatchesOracle(h, project.id);
});

it("computes in full a new task whose creation's mark the refresh did not read, met among the tasks to re-cost", async () => {
  const dev = await createJobRole(h.api, 'Tester');
  const project = await createProject(h.api);
  const ann = await createMember(h.api, { name: 'Cy' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [ann.id] });
  await expectProjectMatchesOracle(h, project.id);

  const created = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [ann.id] });
  await h.api.patch(`/api/team-members/${ann.id}`).send({ name: 'Cyd' }).expect(200);
  const { revision } = await h.db('projects').where({ team_id: h.teamId, id: project.id }).first('revision');
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).update({ revision });
  expect(await h.db('stale_tasks').where({ team_id: h.teamId, task_id: created.id }).del()).toBe(1);

  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  expect(await h.db('task_labor').where({ team_id: h.teamId, task_id: created.id }).first('task_id')).toEqual({ task_id: created.id });
  await expectProjectMatchesOracle(h, project.id);
});
