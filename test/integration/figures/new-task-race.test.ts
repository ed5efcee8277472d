import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * A new task is marked by its insert (migration 009's trigger), so a refresh finds it among the marks.
 * A rename (or a rate or role change) committing after the refresh read the marks and the revision,
 * beside a task created just before it, leaves the refresh without the new task's mark but with the
 * new task among the renamed member's tasks, whose estimates only are costed again, from stored
 * figures the new task does not have: it is computed in full instead. Here that moment is set up by
 * hand: the stamp is given the revision of the rename, as that refresh would have read it, and the
 * creation's mark removed, as that refresh would not have read it. A task inserted without the
 * service (an instance of an earlier release still running during an upgrade, or by hand) is marked
 * by the same trigger.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

/**
 * The race of the header, up to the read: a project with one task of a member, read; a new task of
 * theirs created, the member renamed, and the stamp given the rename's revision. Names are the test's
 * own (a team's roles and members are unique by name).
 */
async function renameBesideNewTask(roleName: string, name: string, newName: string) {
  const role = await createJobRole(h.api, roleName);
  const project = await createProject(h.api);
  const member = await createMember(h.api, { name });
  await addToProject(h.api, project.id, member.id, role.id);
  await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [member.id] });
  await expectProjectMatchesOracle(h, project.id);

  const created = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [member.id] });
  await h.api.patch(`/api/team-members/${member.id}`).send({ name: newName }).expect(200);
  const { revision } = await h.db('projects').where({ team_id: h.teamId, id: project.id }).first('revision');
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).update({ revision });
  const stored = () => h.db('task_labor').where({ team_id: h.teamId, task_id: created.id }).first('task_id');
  return { project, created, stored };
}

it('recomputes a new task in full when a rename marked after its creation meets a stamp of the same revision', async () => {
  const { project, created, stored } = await renameBesideNewTask('Developer', 'Ann', 'Anna');
  expect(await stored()).toBeUndefined();

  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  expect(await stored()).toEqual({ task_id: created.id });
  await expectProjectMatchesOracle(h, project.id);
});

it("computes in full a new task whose creation's mark the refresh did not read, met among the tasks to re-cost", async () => {
  const { project, created, stored } = await renameBesideNewTask('Tester', 'Cy', 'Cyd');
  const creationMark = () => h.db('stale_tasks').where({ team_id: h.teamId, task_id: created.id }).select('task_id');
  expect(await creationMark()).toHaveLength(1);
  await h.db('stale_tasks').where({ team_id: h.teamId, task_id: created.id }).del();
  expect(await creationMark()).toHaveLength(0);

  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  expect(await stored()).toEqual({ task_id: created.id });
  await expectProjectMatchesOracle(h, project.id);
});

it('computes a task inserted without the service (the revision bumped by hand, no mark written) at the next read', async () => {
  const dev = await createJobRole(h.api, 'Analyst');
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: 40 }]);
  const dee = await createMember(h.api, { name: 'Dee' });
  await addToProject(h.api, project.id, dee.id, dev.id);
  const parent = await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [dee.id] });
  await expectProjectMatchesOracle(h, project.id);

  // What an earlier release's task creation wrote: the revision bumped, the task and its assignee.
  await h.db.transaction(async (trx) => {
    await trx('projects').where({ team_id: h.teamId, id: project.id }).increment('revision', 1);
    const [created] = await trx('tasks')
      .insert({ team_id: h.teamId, project_id: project.id, parent_task_id: parent.id, name: 'Inserted by hand', estimated_hours: '2.5' })
      .returning('id');
    await trx('task_assignees').insert({ team_id: h.teamId, task_id: created.id, team_member_id: dee.id });
  });
  // Worked by hand: 2.5 h at 40 = 100 on the new task, 40 + 100 = 140 and 3.5 h rolled up into its parent.
  const res = await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  const [listed] = res.body.body.tasks as { id: string; estimated_hours: number; estimated_labor_cost: number; sub_tasks_count: number }[];
  expect(listed && [listed.id, listed.estimated_hours, listed.estimated_labor_cost, listed.sub_tasks_count]).toEqual([parent.id, 3.5, 140, 1]);
  await expectProjectMatchesOracle(h, project.id);
});
