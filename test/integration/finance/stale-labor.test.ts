import { refreshStaleProjects } from '../../../src/finance/read-model/freshness';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, breakdown, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';

/*
 * Stored figures without a stamp (a database from before migration 003, or figures a migration added
 * empty): a breakdown answers from the calculator, a list brings them current by itself, and
 * refreshStaleProjects (run by migrateToLatest at every start) fills them again.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

it('answers from the calculator while stored parts are unstamped, and refreshStaleProjects restores them', async () => {
  const role = await createJobRole(h.api);
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 42.5 }]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bo = await createMember(h.api, { name: 'Bo' });
  for (const member of [ann, bo]) await addToProject(h.api, project.id, member.id, role.id);
  const parent = await createTask(h.api, project.id, { estimated_hours: 10, assignee_ids: [ann.id, bo.id], fixed_cost: 12.34 });
  const child = await createTask(h.api, project.id, { estimated_hours: 2.5, assignee_ids: [bo.id], parent_task_id: parent.id });
  await logTime(h.api, child.id, ann.id, { seconds: 5400 });
  const listPath = `/api/project-finance/project/${project.id}/tasks`;
  const before = { parent: await breakdown(h.api, parent.id), child: await breakdown(h.api, child.id), list: (await h.api.get(listPath).expect(200)).body };

  // As after migration 002 on an older database: the stored parts and roll-ups empty, one row missing.
  await h.db('task_labor').where({ task_id: parent.id }).update({ members_json: null, grouped_members_json: null, children: null });
  await h.db('task_labor').where({ task_id: child.id }).delete();
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).delete();
  expect(await breakdown(h.api, parent.id)).toEqual(before.parent);
  expect(await breakdown(h.api, child.id)).toEqual(before.child);

  expect(await refreshStaleProjects(h.db)).toBeGreaterThanOrEqual(1);
  expect(await refreshStaleProjects(h.db)).toBe(0);
  const stored = await h.db('task_labor').whereIn('task_id', [parent.id, child.id]).select('task_id', 'members_json', 'children');
  expect(stored).toHaveLength(2);
  for (const row of stored) expect(row.members_json).not.toBeNull();
  expect(await breakdown(h.api, parent.id)).toEqual(before.parent);
  expect(await breakdown(h.api, child.id)).toEqual(before.child);
  expect((await h.api.get(listPath).expect(200)).body).toEqual(before.list);
});
