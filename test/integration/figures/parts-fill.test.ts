import { onRefreshed } from '../../../src/finance/read-model/freshness';
import { storedBreakdown } from '../../../src/finance/read-model/breakdown.sql';
import { refreshSettings } from '../../../src/finance/read-model/labor';
import { createPartsFiller, fillBreakdownParts } from '../../../src/finance/read-model/parts-fill';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { oracleBreakdown, readInputs } from '../../support/oracle';
import { currentStoredParts, expectProjectMatchesOracle } from './check';

/*
 * The filler (src/finance/read-model/parts-fill.ts) computes the breakdown parts that a project-wide refresh left
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

/** A task's stored breakdown parts when they are of its project's parts version (what a breakdown serves), else nulls. */
const storedParts = async (taskId: string) => {
  const row = await currentStoredParts(h, taskId);
  return {
    members: row.members_json === null ? null : JSON.parse(row.members_json),
    grouped_members: row.grouped_members_json === null ? null : JSON.parse(row.grouped_members_json),
  };
};

/**
 * Every task's stored parts are the oracle's members and role groups for it, and are what its
 * breakdown serves (of the project's parts version, its figures current).
 */
async function expectStoredPartsMatchOracle(project = projectId, tasks: readonly string[] = taskIds) {
  const inputs = await readInputs(h.db, h.teamId, project);
  for (const taskId of tasks) {
    const expected = oracleBreakdown(inputs, taskId, false) as { members: unknown; grouped_members: unknown };
    expect({ taskId, ...(await storedParts(taskId)) }).toEqual({ taskId, members: expected.members, grouped_members: expected.grouped_members });
    const served = await storedBreakdown(h.db, { teamId: h.teamId, taskId });
    expect({ taskId, current: served?.current, served: served?.members_json !== null }).toEqual({ taskId, current: true, served: true });
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
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toEqual({ stored: taskIds.length, complete: true });
  await expectStoredPartsMatchOracle();
  // Nothing left to fill.
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toEqual({ stored: 0, complete: true });
  await expectProjectMatchesOracle(h, projectId);
});

it('stores nothing for what has changed since the last refresh', async () => {
  await setRateCard(h.api, projectId, [
    { job_role_id: ids.dev as string, hourly_rate: 125 },
    { job_role_id: ids.qa as string, hourly_rate: 60 },
  ]);
  // The rate change makes the whole project out of date until a refresh takes it in.
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toEqual({ stored: 0, complete: false });
  await readList();
  // A time log marks its task only: the others' figures stay current, and theirs are filled in.
  await logTime(h.api, taskIds[2] as string, ids.bob as string, { seconds: 3600 });
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toEqual({ stored: 2, complete: true });
  expect((await storedParts(taskIds[2] as string)).members).toBeNull();
  await readList();
  expect(await fillBreakdownParts(h.db, h.teamId, projectId)).toEqual({ stored: 1, complete: true });
  await expectStoredPartsMatchOracle();
});

it('fills in behind a refresh by itself once registered, after renames made every part out of date', async () => {
  const filler = createPartsFiller(h.db, createLogger('silent'), { pollMs: 1 });
  onRefreshed(h.db, filler.refreshed);
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
    onRefreshed(h.db, () => undefined);
    await filler.stop();
  }
});

it('waits while requests are being answered, then fills in', async () => {
  let quiet = false;
  const filler = createPartsFiller(h.db, createLogger('silent'), { quiet: () => quiet, pollMs: 1 });
  onRefreshed(h.db, filler.refreshed);
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
    onRefreshed(h.db, () => undefined);
    await filler.stop();
  }
});

describe('a project of more tasks than a batch', () => {
  let big: string;
  const bigTasks: string[] = [];
  const stored = async () => Promise.all(bigTasks.map(async (taskId) => (await storedParts(taskId)).members !== null));
  const count = async () => (await stored()).filter(Boolean).length;
  const setBigRate = (rate: number) => setRateCard(h.api, big, [{ job_role_id: ids.dev as string, hourly_rate: rate }]);
  const readBigList = () => h.api.get(`/api/project-finance/project/${big}/tasks`).expect(200);

  beforeAll(async () => {
    big = (await createProject(h.api, { currency: 'USD' })).id;
    await setBigRate(100.5);
    await addToProject(h.api, big, ids.ann as string, ids.dev as string);
    // 1.55 h at 100.5 is 155.775: 155.78 in USD, 155.775 in KWD.
    for (let i = 0; i < 60; i++) bigTasks.push((await createTask(h.api, big, { estimated_hours: 1.55, assignee_ids: [ids.ann as string] })).id);
  }, 120_000);

  it('computes each batch in the currency read with its stamp, not one read before a currency change', async () => {
    await setBigRate(100.5);
    await readBigList();
    let batches = 0;
    const result = await fillBreakdownParts(h.db, h.teamId, big, async () => {
      if (batches++ === 0) {
        await h.api.patch(`/api/projects/${big}`).send({ currency: 'KWD' }).expect(200);
        await readBigList();
      }
      return true;
    });
    // The first batch was stored, then emptied by the currency change's refresh; the rest computed in KWD.
    expect(result).toEqual({ stored: 60, complete: true });
    expect(await count()).toBe(10);
    const inputs = await readInputs(h.db, h.teamId, big);
    for (const taskId of bigTasks) {
      const parts = await storedParts(taskId);
      if (parts.members !== null) expect(parts.members).toEqual((oracleBreakdown(inputs, taskId, false) as { members: unknown }).members);
    }
    expect(await fillBreakdownParts(h.db, h.teamId, big)).toEqual({ stored: 50, complete: true });
    await expectStoredPartsMatchOracle(big, bigTasks);
  });

  it('goes on after the next refresh when a write interrupted it between batches', async () => {
    // The 60 tasks' refresh leaves their parts; the refresh of one renamed task stores its own (so it
    // reports none left, and only the interrupted fill makes the filler go on).
    refreshSettings.partsEagerly = 59;
    let open = true;
    let asked = 0;
    // Quiet for the first batch, then closed until the test has written.
    const filler = createPartsFiller(h.db, createLogger('silent'), { quiet: () => (asked++ === 0 ? true : open), pollMs: 1 });
    onRefreshed(h.db, filler.refreshed);
    try {
      open = false;
      await setBigRate(110.5);
      await readBigList();
      while ((await count()) < 50) await new Promise((resolve) => setTimeout(resolve, 5));
      // A write between two batches: the project is out of date when the filler looks again.
      await h.api.patch(`/api/tasks/${bigTasks[0]}`).send({ name: 'Renamed' }).expect(200);
      open = true;
      await filler.idle();
      expect(await count()).toBe(50);
      // The next refresh (a small one, storing its one task's parts itself) lets it go on.
      await readBigList();
      await filler.idle();
      await expectStoredPartsMatchOracle(big, bigTasks);
    } finally {
      refreshSettings.partsEagerly = 0;
      onRefreshed(h.db, () => undefined);
      await filler.stop();
    }
  });

  it('fills in behind a refresh of every task (a currency change), which records no changed input', async () => {
    const filler = createPartsFiller(h.db, createLogger('silent'), { pollMs: 1 });
    onRefreshed(h.db, filler.refreshed);
    try {
      await h.api.patch(`/api/projects/${big}`).send({ currency: 'USD' }).expect(200);
      await readBigList();
      await filler.idle();
      await expectStoredPartsMatchOracle(big, bigTasks);
    } finally {
      onRefreshed(h.db, () => undefined);
      await filler.stop();
    }
  });
});
