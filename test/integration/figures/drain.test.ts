import { createDrainer, Drainer } from '../../../src/finance/read-model/drainer';
import { drainMarks } from '../../../src/finance/read-model/freshness';
import { storedBreakdown } from '../../../src/finance/read-model/breakdown.sql';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { until } from '../../support/locks';
import { backendFromEnv } from '../../support/backend';
import { itIf } from '../../support/skip';
import { holdLocks } from '../../support/locks';
import { currentStoredParts, expectProjectMatchesOracle } from './check';

/*
 * The drainer (src/finance/read-model/drainer.ts) brings marked tasks current in the background, with
 * no read asking for them: after a burst of time logs the marks empty while no request is made, and
 * what it stored is what the oracle computes (read afterwards from the stored figures: reads then
 * refresh nothing, the generation shows it). Its own database: the drainer drains every team's marks.
 */
let h: Harness;
let drainer: Drainer | undefined;
let projectId: string;
const tasks: string[] = [];
const people: string[] = [];

beforeAll(async () => {
  h = await startHarness({ ownDatabase: true });
  const dev = await createJobRole(h.api, 'Developer');
  const qa = await createJobRole(h.api, 'QA');
  const project = await createProject(h.api);
  projectId = project.id;
  await setRateCard(h.api, projectId, [
    { job_role_id: dev.id, hourly_rate: 100 },
    { job_role_id: qa.id, hourly_rate: 60.5 },
  ]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bob = await createMember(h.api, { name: 'Bob' });
  await addToProject(h.api, projectId, ann.id, dev.id);
  await addToProject(h.api, projectId, bob.id, qa.id);
  people.push(ann.id, bob.id);
  const root = await createTask(h.api, projectId, { estimated_hours: 10, assignee_ids: [ann.id, bob.id] });
  const child = await createTask(h.api, projectId, { estimated_hours: 3, assignee_ids: [bob.id], parent_task_id: root.id });
  const grandchild = await createTask(h.api, projectId, { estimated_hours: 2.5, assignee_ids: [ann.id], parent_task_id: child.id });
  const other = await createTask(h.api, projectId, { estimated_hours: 1.5, assignee_ids: [ann.id] });
  const lone = await createTask(h.api, projectId, { estimated_hours: 0 });
  tasks.push(root.id, child.id, grandchild.id, other.id, lone.id);
  // Current before the burst: the drain below is of time logs' marks only.
  await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
}, 120_000);

afterEach(async () => {
  await drainer?.stop();
  drainer = undefined;
});
afterAll(() => h.close());

const marks = async (table: 'stale_tasks' | 'stale_inputs' = 'stale_tasks') =>
  Number((await h.db(table).where({ team_id: h.teamId, project_id: projectId }).count<{ n: string }[]>({ n: '*' }))[0]?.n);

const generation = async () => Number((await h.db('project_figures').where({ team_id: h.teamId, project_id: projectId }).first('generation')).generation);

/** Several time logs on every task but the last, by both members. */
async function burst() {
  for (let round = 0; round < 3; round++) {
    for (const [i, task] of tasks.slice(0, -1).entries()) {
      await logTime(h.api, task, people[(i + round) % 2] as string, { seconds: 600 * (round + 1) + 37 * i });
    }
  }
}

it('drains a burst of time logs with no read, in batches, to what the oracle computes', async () => {
  await burst();
  expect(await marks()).toBeGreaterThan(0);
  const before = await generation();
  // Two tasks a batch: several transactions, each a refresh of some marked tasks.
  drainer = createDrainer(h.db, createLogger('silent'), { batch: 2, pollMs: 1 });
  await until(async () => (await marks()) === 0);
  await drainer.stop();
  drainer = undefined;
  const drained = await generation();
  expect(drained - before).toBeGreaterThanOrEqual(2);
  // Every task's stored figures are current and hold their breakdown parts: a breakdown reads them.
  for (const task of tasks) {
    const row = await storedBreakdown(h.db, { teamId: h.teamId, taskId: task });
    expect({ task, current: row?.current }).toEqual({ task, current: true });
    expect((await currentStoredParts(h, task)).members_json).not.toBeNull();
  }
  await expectProjectMatchesOracle(h, projectId);
  // The reads found the figures current: none refreshed anything.
  expect(await generation()).toBe(drained);
});

it('drains while requests are being answered too, resting between batches', async () => {
  await burst();
  drainer = createDrainer(h.db, createLogger('silent'), { batch: 2, pollMs: 1, quiet: () => false, share: 0.5 });
  await until(async () => (await marks()) === 0);
  await drainer.stop();
  drainer = undefined;
  const drained = await generation();
  await expectProjectMatchesOracle(h, projectId);
  expect(await generation()).toBe(drained);
});

it('leaves the marks a step did not read for the next one', async () => {
  await burst();
  const marked = Number((await h.db('stale_tasks').where({ team_id: h.teamId, project_id: projectId }).countDistinct<{ n: string }[]>({ n: 'task_id' }))[0]?.n);
  const first = await drainMarks(h.db, h.teamId, projectId, 1);
  expect(first).toEqual({ kind: 'drained', tasks: 1, more: true });
  const left = Number((await h.db('stale_tasks').where({ team_id: h.teamId, project_id: projectId }).countDistinct<{ n: string }[]>({ n: 'task_id' }))[0]?.n);
  expect(left).toBe(marked - 1);
  // A task still marked is computed at its read, from the inputs: the breakdowns match the oracle.
  await expectProjectMatchesOracle(h, projectId);
});

it('brings a project whose stamp is out of date current as a whole, with no read', async () => {
  const card = await h.api.get(`/api/projects/${projectId}/rate-card`).expect(200);
  const roles = (card.body.body.roles as { job_role_id: string; hourly_rate: number }[]).map((r) => ({ job_role_id: r.job_role_id, hourly_rate: Number(r.hourly_rate) + 7 }));
  await setRateCard(h.api, projectId, roles);
  await logTime(h.api, tasks[0] as string, people[0] as string, { seconds: 900 });
  expect(await drainMarks(h.db, h.teamId, projectId, 10)).toEqual({ kind: 'whole' });
  drainer = createDrainer(h.db, createLogger('silent'), { pollMs: 1 });
  await until(async () => (await marks()) === 0 && (await marks('stale_inputs')) === 0);
  await drainer.stop();
  drainer = undefined;
  const drained = await generation();
  await expectProjectMatchesOracle(h, projectId);
  expect(await generation()).toBe(drained);
});

itIf(backendFromEnv().kind === 'postgres', 'skipped on PGlite: one connection, no second transaction to hold the lock')(
  'does not wait for a refresh that holds the project: busy, marks left',
  async () => {
    await burst();
    const marked = await marks();
    const held = await holdLocks(h.db, (trx) => trx.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', [h.teamId, projectId]));
    try {
      expect(await drainMarks(h.db, h.teamId, projectId, 10)).toEqual({ kind: 'busy' });
      expect(await marks()).toBe(marked);
    } finally {
      await held.trx.rollback();
    }
    expect(await drainMarks(h.db, h.teamId, projectId, 100)).toEqual({ kind: 'drained', tasks: 4, more: false });
    await expectProjectMatchesOracle(h, projectId);
  },
);
