import { onPartsLeft } from '../../../src/finance/figures';
import { refreshSettings } from '../../../src/finance/labor';
import { createPartsFiller, fillBreakdownParts } from '../../../src/finance/parts-fill';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { oracleBreakdown, readInputs } from '../../support/oracle';
import { expectProjectMatchesOracle } from './check';

/*
 * The filler (src/finance/parts-fill.ts) computes the breakdown parts that a project-wide refresh left
 * empty. What it stores is compared with the oracle's breakdown of each task (test/support/oracle.ts),
 * read straight from the labor rows; it must store nothing while the project's figures are not current.
 * refreshSettings.partsEagerly is 0 here, so every refresh of this small project leaves parts empty.
 */
let h: Harness;
let projectId: string;
const ids: Record<string, string> = {};
const taskIds: string[] = [];
const eagerly = refreshSettings.partsEagerly;

beforeAll(async () => {
  h = await startHarness();
  refreshSettings.partsEagerly = 0;
  const dev = await createJobRole(h.api, 'Developer');
  const qa = await createJobRole(h.api, 'QA');
  ids.dev = dev.id;
  ids.qa = qa.id;
  const project = await createProject(h.api);
  projectId = project.id;
  await setRateCard(h.api, projectId, [
    { job_role_id: dev.id, hourly_rate: 100 },
    { job_role_id: qa.id, hourly_rate: 60 },
  ]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bob = await createMember(h.api, { name: 'Bob' });
  await addToProject(h.api, projectId, ann.id, dev.id);
  await addToProject(h.api, projectId, bob.id, qa.id);
  // Logs time on a task without being assigned to it: renaming Cid changes no task's figures (no
  // estimate is split by Cid's name), yet makes every stored part of the project out of date.
  const cid = await createMember(h.api, { name: 'Cid' });
  await addToProject(h.api, projectId, cid.id, dev.id);
  Object.assign(ids, { ann: ann.id, bob: bob.id, cid: cid.id });
  const root = await createTask(h.api, projectId, { estimated_hours: 10, assignee_ids: [ann.id, bob.id] });
  const child = await createTask(h.api, projectId, { estimated_hours: 3, assignee_ids: [bob.id], parent_task_id: root.id });
  const other = await createTask(h.api, projectId, { estimated_hours: 1.5, assignee_ids: [ann.id] });
  taskIds.push(root.id, child.id, other.id);
  await logTime(h.api, child.id, ann.id, { seconds: 5400 });
  await logTime(h.api, root.id, bob.id, { seconds: 1800 });
  await logTime(h.api, other.id, ann.id, { seconds: 900 });
  await logTime(h.api, child.id, cid.id, { seconds: 2700 });
}, 120_000);
afterAll(async () => {
  refreshSettings.partsEagerly = eagerly;
  await h.close();
});

const storedParts = async (taskId: string) => {
  const row = await h.db('task_labor').where({ team_id: h.teamId, task_id: taskId }).first('members_json', 'grouped_members_json');
  return {
    members: row.members_json === null ? null : JSON.parse(row.members_json),
    grouped_members: row.grouped_members_json === null ? null : JSON.parse(row.grouped_members_json),
  };
};

/** Every task's stored parts are the oracle's members and role groups for it. */
async function expectStoredPartsMatchOracle() {
  const inputs = await readInputs(h.db, h.teamId, projectId);
  for (const taskId of taskIds) {
    const expected = oracleBreakdown(inputs, taskId, false) as { members: unknown; grouped_members: unknown };
    expect({ taskId, ...(await storedParts(taskId)) }).toEqual({ taskId, members: expected.members, grouped_members: expected.grouped_members });
  }
}

const readList = () => h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);

it('fills in every task the project-wide refresh left without parts, as the oracle computes them', async () => {
  await setRateCard(h.api, projectId, [
    { job_role_id: ids.dev as string, hourly_rate: 120 },
    { job_role_id: ids.qa as string, hourly_rate: 60 },
  ]);
  await readList();
  for (const taskId of taskIds) expect((await storedParts(taskId)).members).toBeNull();
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toBe(taskIds.length);
  await expectStoredPartsMatchOracle();
  // Nothing left to fill.
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toBe(0);
  await expectProjectMatchesOracle(h, projectId);
});

it('stores nothing for what has changed since the last refresh', async () => {
  await setRateCard(h.api, projectId, [
    { job_role_id: ids.dev as string, hourly_rate: 125 },
    { job_role_id: ids.qa as string, hourly_rate: 60 },
  ]);
  // The rate change makes the whole project out of date until a refresh takes it in.
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toBe(0);
  await readList();
  // A time log marks its task only: the others' figures stay current, and theirs are filled in.
  await logTime(h.api, taskIds[2] as string, ids.bob as string, { seconds: 3600 });
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toBe(2);
  expect((await storedParts(taskIds[2] as string)).members).toBeNull();
  await readList();
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toBe(1);
  await expectStoredPartsMatchOracle();
});

it('fills in behind a refresh by itself once registered, after renames made every part out of date', async () => {
  const filler = createPartsFiller(h.db, createLogger('silent'), { pollMs: 1 });
  onPartsLeft(h.db, filler.schedule);
  try {
    await h.api.patch(`/api/team-members/${ids.bob}`).send({ name: 'Robert' }).expect(200);
    await readList();
    await filler.idle();
    await expectStoredPartsMatchOracle();
    const names = (await storedParts(taskIds[1] as string)).members.map((member: { name: string }) => member.name);
    expect(names).toContain('Robert');
    await h.api.patch(`/api/team-members/${ids.cid}`).send({ name: 'Cecil' }).expect(200);
    await readList();
    await filler.idle();
    await expectStoredPartsMatchOracle();
    await expectProjectMatchesOracle(h, projectId);
  } finally {
    onPartsLeft(h.db, () => undefined);
    await filler.stop();
  }
});

it('waits while requests are being answered, then fills in', async () => {
  let quiet = false;
  const filler = createPartsFiller(h.db, createLogger('silent'), { quiet: () => quiet, pollMs: 1 });
  onPartsLeft(h.db, filler.schedule);
  try {
    await setRateCard(h.api, projectId, [
      { job_role_id: ids.dev as string, hourly_rate: 150 },
      { job_role_id: ids.qa as string, hourly_rate: 60 },
    ]);
    await readList();
    // However long it is given: never while not quiet.
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const taskId of taskIds) expect((await storedParts(taskId)).members).toBeNull();
    quiet = true;
    await filler.idle();
    await expectStoredPartsMatchOracle();
  } finally {
    onPartsLeft(h.db, () => undefined);
    await filler.stop();
  }
});
