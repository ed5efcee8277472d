import { refreshSettings } from '../../../src/finance/read-model/labor';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { currentStoredParts, expectBreakdownMatchesOracle, expectProjectMatchesOracle } from './check';

/*
 * A refresh of more tasks than refreshSettings.partsEagerly (a project-wide change on a large project)
 * stores the figures only; each task's breakdown parts are computed by its next breakdown read and
 * stored then, unless the labor row changed meanwhile. Set to 0 here so every refresh of a small project
 * takes that path (a rate change recomputes only the tasks it costs: here one or two).
 */
let h: Harness;
let projectId: string;
const ids: Record<string, string> = {};
const eagerly = refreshSettings.partsEagerly;

beforeAll(async () => {
  h = await startHarness();
  refreshSettings.partsEagerly = 0;
  const dev = await createJobRole(h.api, 'Developer');
  ids.dev = dev.id;
  const project = await createProject(h.api);
  projectId = project.id;
  await setRateCard(h.api, projectId, [{ job_role_id: dev.id, hourly_rate: 100 }]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bob = await createMember(h.api, { name: 'Bob' });
  await addToProject(h.api, projectId, ann.id, dev.id);
  await addToProject(h.api, projectId, bob.id, null);
  const root = await createTask(h.api, projectId, { estimated_hours: 10, assignee_ids: [ann.id, bob.id] });
  const child = await createTask(h.api, projectId, { estimated_hours: 3, assignee_ids: [bob.id], parent_task_id: root.id });
  Object.assign(ids, { ann: ann.id, bob: bob.id, root: root.id, child: child.id });
  await logTime(h.api, child.id, ann.id, { seconds: 5400 });
}, 120_000);
afterAll(async () => {
  refreshSettings.partsEagerly = eagerly;
  await h.close();
});

const parts = (taskId: string) => currentStoredParts(h, taskId);

it('stores figures only on a project-wide refresh, then each breakdown stores its parts at its first read', async () => {
  await setRateCard(h.api, projectId, [{ job_role_id: ids.dev as string, hourly_rate: 120 }]);
  // The list read brings the project current: every task recomputed, no parts stored.
  await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
  expect(await parts(ids.root as string)).toEqual({ members_json: null, grouped_members_json: null });
  expect(await parts(ids.child as string)).toEqual({ members_json: null, grouped_members_json: null });

  const first = await h.api.get(`/api/project-finance/task/${ids.child}/breakdown`).expect(200);
  const stored = await parts(ids.child as string);
  expect(stored.members_json).not.toBeNull();
  expect(JSON.parse(stored.members_json as string)).toEqual(first.body.body.members);
  expect(JSON.parse(stored.grouped_members_json as string)).toEqual(first.body.body.grouped_members);
  // Answered from the stored parts now, and both answers agree with the oracle.
  expect((await h.api.get(`/api/project-finance/task/${ids.child}/breakdown`).expect(200)).body).toEqual(first.body);
  await expectProjectMatchesOracle(h, projectId);
});

it('does not store parts computed while the task carries a mark, and a refresh replaces stored ones', async () => {
  await setRateCard(h.api, projectId, [{ job_role_id: ids.dev as string, hourly_rate: 130 }]);
  await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
  await logTime(h.api, ids.root as string, ids.bob as string, { seconds: 3600 });
  // Marked: computed on the fly, nothing stored (the next refresh writes the row).
  await expectBreakdownMatchesOracle(h, ids.root as string, projectId);
  expect((await parts(ids.root as string)).members_json).toBeNull();
  await expectProjectMatchesOracle(h, projectId);
});

it('keeps parts out of a labor row that changed after the breakdown read it', async () => {
  await setRateCard(h.api, projectId, [{ job_role_id: ids.dev as string, hourly_rate: 140 }]);
  await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
  const { storedBreakdown, storeBreakdownParts } = await import('../../../src/finance/read-model/breakdown.sql');
  const read = await storedBreakdown(h.db, { teamId: h.teamId, taskId: ids.child as string });
  expect(read?.members_json).toBeNull();
  // As a refresh committing between the read and the store: the row is rewritten.
  await h.db('task_labor').where({ team_id: h.teamId, task_id: ids.child }).update({ logged_hours: h.db.raw('logged_hours') });
  const old = { task_id: ids.child as string, parts_version: read?.parts_version as string, members_json: '["old"]', grouped_members_json: '[]', warnings_json: '[]' };
  expect(await storeBreakdownParts(h.db, h.teamId, [{ ...old, version: read?.labor_version as string }])).toBe(0);
  expect((await parts(ids.child as string)).members_json).toBeNull();
  expect(await storeBreakdownParts(h.db, h.teamId, [{ ...old, version: '1' }])).toBe(0);
  expect((await parts(ids.child as string)).members_json).toBeNull();
  await expectProjectMatchesOracle(h, projectId);
});
