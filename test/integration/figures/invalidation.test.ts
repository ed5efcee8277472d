import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * Every write route that changes a finance input, one at a time, each followed by every breakdown and
 * list of the project compared with the oracle (never with the service's own stored output). The
 * lists are read (and cached) before each write, so a write that failed to mark what it changes
 * would leave a stale stored figure or cached list behind, and this test would fail. Each check runs
 * twice: the first reads every breakdown before the lists bring the stored figures current, the second
 * after, so the stored breakdown parts a refresh kept (a task it did not recompute) are checked too.
 */
let h: Harness;
let projectId: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  h = await startHarness();
  const dev = await createJobRole(h.api, 'Developer');
  const design = await createJobRole(h.api, 'Designer');
  ids.dev = dev.id;
  ids.design = design.id;
  const project = await createProject(h.api);
  projectId = project.id;
  await setRateCard(h.api, projectId, [
    { job_role_id: dev.id, hourly_rate: 100 },
    { job_role_id: design.id, hourly_rate: 80.5 },
  ]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bob = await createMember(h.api, { name: 'Bob', avatar_url: 'https://example.test/bob.png' });
  const cid = await createMember(h.api, { name: 'Cid' });
  Object.assign(ids, { ann: ann.id, bob: bob.id, cid: cid.id });
  await addToProject(h.api, projectId, ann.id, dev.id);
  await addToProject(h.api, projectId, bob.id, design.id);
  await addToProject(h.api, projectId, cid.id, null);
  const root = await createTask(h.api, projectId, { estimated_hours: 10, assignee_ids: [ann.id, bob.id], fixed_cost: 12.5, status: 'open' });
  const child = await createTask(h.api, projectId, { estimated_hours: 3.33, assignee_ids: [bob.id], parent_task_id: root.id, billable: false });
  const grandchild = await createTask(h.api, projectId, { estimated_hours: 1, assignee_ids: [ann.id], parent_task_id: child.id });
  const other = await createTask(h.api, projectId, { estimated_hours: 2, assignee_ids: [cid.id] });
  Object.assign(ids, { root: root.id, child: child.id, grandchild: grandchild.id, other: other.id });
  await logTime(h.api, child.id, ann.id, { seconds: 5400 });
  await logTime(h.api, grandchild.id, cid.id, { seconds: 1800 });
  await expectProjectMatchesOracle(h, projectId);
}, 120_000);
afterAll(() => h.close());

const cases: [string, () => Promise<unknown>][] = [
  ['POST a task under a parent', () => createTask(h.api, projectId, { estimated_hours: 4, assignee_ids: [ids.bob as string], parent_task_id: ids.grandchild })],
  ['PATCH a task estimate', () => h.api.patch(`/api/tasks/${ids.grandchild}`, { estimated_hours: 7.25 }).expect(200)],
  ['PATCH a task assignees', () => h.api.patch(`/api/tasks/${ids.root}`, { assignee_ids: [ids.cid, ids.bob] }).expect(200)],
  ['PATCH a task billable', () => h.api.patch(`/api/tasks/${ids.grandchild}`, { billable: false }).expect(200)],
  ['PATCH a task fixed cost', () => h.api.patch(`/api/tasks/${ids.child}`, { fixed_cost: 99.99 }).expect(200)],
  ['PATCH a task parent (move)', () => h.api.patch(`/api/tasks/${ids.grandchild}`, { parent_task_id: ids.other }).expect(200)],
  ['PATCH a task name and status', () => h.api.patch(`/api/tasks/${ids.other}`, { name: 'Renamed task', status: 'done' }).expect(200)],
  ['PUT a fixed cost', () => h.api.put(`/api/project-finance/task/${ids.other}/fixed-cost`, { fixed_cost: 7 }).expect(200)],
  ['POST a time log', async () => {
    const log = await logTime(h.api, ids.other as string, ids.bob as string, { seconds: 4000 });
    ids.log = log.id;
  }],
  ['DELETE a time log', () => h.api.delete(`/api/time-logs/${ids.log}`).expect(200)],
  ['PUT the rate card', () => setRateCard(h.api, projectId, [{ job_role_id: ids.dev as string, hourly_rate: 120 }, { job_role_id: ids.design as string, hourly_rate: 60 }])],
  ['PUT a project member role', () => addToProject(h.api, projectId, ids.cid as string, ids.design as string)],
  ['PUT a project member who logged time before joining the project', async () => {
    // Time can be logged by any member of the team; joining gives the member a role from the beginning.
    const dee = await createMember(h.api, { name: 'Dee' });
    ids.dee = dee.id;
    await logTime(h.api, ids.child as string, dee.id, { seconds: 2700, logged_at: '2026-01-15T10:00:00Z' });
    await expectProjectMatchesOracle(h, projectId);
    await addToProject(h.api, projectId, dee.id, ids.dev as string);
  }],
  ['PATCH a team member name', () => h.api.patch(`/api/team-members/${ids.ann}`, { name: 'Zoe' }).expect(200)],
  ['PATCH a team member avatar', () => h.api.patch(`/api/team-members/${ids.cid}`, { avatar_url: 'https://example.test/cid.png' }).expect(200)],
  ['PATCH the project currency', () => h.api.patch(`/api/projects/${projectId}`, { currency: 'EUR' }).expect(200)],
  ['DELETE a project member who logged time', async () => {
    await h.api.patch(`/api/tasks/${ids.root}`, { assignee_ids: [ids.bob] }).expect(200);
    await h.api.patch(`/api/tasks/${ids.other}`, { assignee_ids: [] }).expect(200);
    await logTime(h.api, ids.other as string, ids.cid as string, { seconds: 3600 });
    await expectProjectMatchesOracle(h, projectId);
    await h.api.delete(`/api/projects/${projectId}/members/${ids.cid}`).expect(200);
  }],
  ['DELETE (archive) a task', () => h.api.delete(`/api/tasks/${ids.child}`).expect(200)],
];

it.each(cases)('%s: every breakdown and list matches the oracle', async (_name, write) => {
  await write();
  await expectProjectMatchesOracle(h, projectId);
  await expectProjectMatchesOracle(h, projectId);
}, 120_000);
