import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectBreakdownMatchesOracle } from './check';

/*
 * An instance keeps encoded breakdown answers (src/finance/read-model/answer-cache.ts) and serves one
 * again only when the stored read finds the same versions of every row it was rendered from (the
 * task's, its labor row's, the project's parts version and currency) with the figures current. Here:
 * a second read does not fetch the stored parts; every kind of change to what an answer shows (a time
 * log, a fixed cost, the task's name or billable flag, a member's name, the rates, the currency, and
 * edits by hand in SQL) gives the oracle's answer at the next read, never the one kept.
 */
let h: Harness;
let projectId: string;
let taskId: string;
let ann: { id: string };
let dev: { id: string };

/** The stored reads' rows of the task seen since the last call: whether each fetched the parts. */
const reads: { known: boolean; members: boolean }[] = [];
const onResponse = (response: unknown, query: { sql: string }) => {
  if (!query.sql.includes('with ordinality as k (team_id, task_id, known, key)')) return;
  for (const row of (response as { rows: { id: string; known: boolean; members_json: string | null }[] }).rows) {
    if (row.id === taskId) reads.push({ known: row.known, members: row.members_json !== null });
  }
};

beforeAll(async () => {
  h = await startHarness();
  dev = await createJobRole(h.api, 'Developer');
  projectId = (await createProject(h.api, { currency: 'EUR' })).id;
  await setRateCard(h.api, projectId, [{ job_role_id: dev.id, hourly_rate: 100 }]);
  ann = await createMember(h.api, { name: 'Ann' });
  await addToProject(h.api, projectId, ann.id, dev.id);
  taskId = (await createTask(h.api, projectId, { estimated_hours: 10, assignee_ids: [ann.id] })).id;
  await logTime(h.api, taskId, ann.id, { seconds: 5400 });
  // The project brought current: breakdowns are served from the stored figures.
  await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
  h.db.on('query-response', onResponse);
}, 120_000);
afterAll(async () => {
  h.db.off('query-response', onResponse);
  await h.close();
});

/** Reads the breakdown twice: it must match the oracle, the first read fetch the parts, the second not. */
async function expectFreshThenKept() {
  await expectBreakdownMatchesOracle(h, taskId, projectId);
  const first = await h.api.get(`/api/project-finance/task/${taskId}/breakdown`).expect(200);
  const again = await h.api.get(`/api/project-finance/task/${taskId}/breakdown`).expect(200);
  expect(again.body).toEqual(first.body);
  expect(again.headers.etag).toBe(first.headers.etag);
  return reads.splice(0);
}

it('serves an unchanged answer without fetching its stored parts', async () => {
  reads.length = 0;
  const seen = await expectFreshThenKept();
  expect(seen.at(-1)).toEqual({ known: true, members: false });
  expect(seen.at(-2)).toEqual({ known: true, members: false });
});

const changes: [string, () => Promise<unknown>][] = [
  ['a time log', () => logTime(h.api, taskId, ann.id, { seconds: 1800 })],
  ['a fixed cost', () => h.api.put(`/api/project-finance/task/${taskId}/fixed-cost`, { fixed_cost: 250.5 }).expect(200)],
  ['the task renamed', () => h.api.patch(`/api/tasks/${taskId}`, { name: 'Renamed' }).expect(200)],
  ['the task made non-billable', () => h.api.patch(`/api/tasks/${taskId}`, { billable: false }).expect(200)],
  ['a member renamed', () => h.api.patch(`/api/team-members/${ann.id}`, { name: 'Annabel' }).expect(200)],
  ['the rates changed', () => setRateCard(h.api, projectId, [{ job_role_id: dev.id, hourly_rate: 111.5 }])],
  ['the currency changed', () => h.api.patch(`/api/projects/${projectId}`, { currency: 'USD' }).expect(200)],
  // A hand edit of the stored row that keeps its text: a new row version all the same.
  ['the labor row rewritten by hand', () => h.db.raw('update task_labor set members_json = members_json where task_id = ?', [taskId])],
  // A hand edit of the task's name alone: no mark, no refresh, only the task's row version.
  ['the task renamed by hand', () => h.db.raw(`update tasks set name = 'Named by hand' where id = ?`, [taskId])],
];

it.each(changes)('after %s, answers what the inputs say, then keeps that', async (_name, change) => {
  await change();
  reads.length = 0;
  // Out of date first (but for the hand edit): computed on the fly, whatever is kept.
  await expectBreakdownMatchesOracle(h, taskId, projectId);
  // Brought current (tests run no drainer): the kept answer's versions are gone, the parts read again
  // (or computed and stored, after a project-wide refresh that stored figures only).
  await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
  const seen = await expectFreshThenKept();
  expect(seen.some((read) => !read.known)).toBe(true);
  expect(seen.at(-1)).toEqual({ known: true, members: false });
});
