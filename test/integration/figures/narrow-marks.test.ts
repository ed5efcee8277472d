import { today } from '../../../src/clock';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * A rate-card change, a role change or a rename marks what changed (a role's rates, a member, from a
 * day on), and the refresh rewrites only the labor rows of the tasks that change costs: a task whose
 * logged days are costed differently is recomputed, a task whose estimate only is costed differently
 * is re-costed, and every other row is left as it was (its row version, xmin, unchanged). Every answer
 * is compared with the oracle after each change, twice (before and after the refresh).
 */
let h: Harness;
let projectId: string;
const ids: Record<string, string> = {};

/** Each task's labor row version (PostgreSQL's xmin: a new one whenever the row is written). */
async function rowVersions(): Promise<Record<string, string>> {
  const rows: { task_id: string; version: string }[] = await h
    .db('task_labor')
    .where({ team_id: h.teamId, project_id: projectId })
    .select('task_id', h.db.raw('xmin::text as version'));
  return Object.fromEntries(rows.map((row) => [row.task_id, row.version]));
}

/** Which of the named tasks had their labor row written by `write` and the list read after it. */
async function rewrittenBy(write: () => Promise<unknown>): Promise<string[]> {
  const before = await rowVersions();
  await write();
  await expectProjectMatchesOracle(h, projectId);
  const after = await rowVersions();
  await expectProjectMatchesOracle(h, projectId);
  const named = Object.entries(ids).filter(([, id]) => id in before);
  return named.filter(([, id]) => before[id] !== after[id]).map(([name]) => name).sort();
}

beforeAll(async () => {
  h = await startHarness();
  const dev = await createJobRole(h.api, 'Developer');
  const qa = await createJobRole(h.api, 'Tester');
  const project = await createProject(h.api);
  projectId = project.id;
  await setRateCard(h.api, projectId, [
    { job_role_id: dev.id, hourly_rate: 100 },
    { job_role_id: qa.id, hourly_rate: 60 },
  ]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bo = await createMember(h.api, { name: 'Bo' });
  const cy = await createMember(h.api, { name: 'Cy' });
  await addToProject(h.api, projectId, ann.id, dev.id);
  await addToProject(h.api, projectId, bo.id, qa.id);
  await addToProject(h.api, projectId, cy.id, qa.id);
  Object.assign(ids, { devRole: dev.id, qaRole: qa.id, annId: ann.id, boId: bo.id, cyId: cy.id });
  // annTask: Ann assigned, no time. loggedTask: Bo assigned, Ann logged time on 2026-01-15.
  // testerTask: Bo and Cy assigned, Cy logged time on 2026-01-15. parent: over testerTask, Cy assigned.
  const parent = await createTask(h.api, projectId, { estimated_hours: 2, assignee_ids: [cy.id] });
  const annTask = await createTask(h.api, projectId, { estimated_hours: 3, assignee_ids: [ann.id] });
  const loggedTask = await createTask(h.api, projectId, { estimated_hours: 1.5, assignee_ids: [bo.id] });
  const testerTask = await createTask(h.api, projectId, { estimated_hours: 0.05, assignee_ids: [bo.id, cy.id], parent_task_id: parent.id });
  await logTime(h.api, loggedTask.id, ann.id, { seconds: 5400, logged_at: '2026-01-15T10:00:00Z' });
  await logTime(h.api, testerTask.id, cy.id, { seconds: 1800, logged_at: '2026-01-15T10:00:00Z' });
  Object.assign(ids, { parent: parent.id, annTask: annTask.id, loggedTask: loggedTask.id, testerTask: testerTask.id });
  await expectProjectMatchesOracle(h, projectId);
}, 120_000);
afterAll(() => h.close());

const task = (name: string) => ids[name] as string;

it("a developer raise from today re-costs the developers' assigned tasks only", async () => {
  const rewritten = await rewrittenBy(() =>
    setRateCard(h.api, projectId, [
      { job_role_id: task('devRole'), hourly_rate: 110 },
      { job_role_id: task('qaRole'), hourly_rate: 60 },
    ], today()),
  );
  expect(rewritten).toEqual(['annTask']);
});

it("a developer raise from a past day recomputes the tasks with developers' time from that day", async () => {
  const rewritten = await rewrittenBy(() =>
    setRateCard(h.api, projectId, [
      { job_role_id: task('devRole'), hourly_rate: 120 },
      { job_role_id: task('qaRole'), hourly_rate: 60 },
    ], '2026-01-01'),
  );
  expect(rewritten).toEqual(['annTask', 'loggedTask']);
});

it('a rename re-costs the tasks the member is assigned to, and their ancestors', async () => {
  const rewritten = await rewrittenBy(() => h.api.patch(`/api/team-members/${task('cyId')}`, { name: 'Aaron' }).expect(200));
  // The split of 0.05 h between Bo and Cy (now Aaron) changes hands; the parent's roll-up is rewritten.
  expect(rewritten).toEqual(['parent', 'testerTask']);
});

it("a role change from a past day recomputes the tasks with the member's time from that day", async () => {
  const rewritten = await rewrittenBy(() =>
    h.api.put(`/api/projects/${projectId}/members/${task('cyId')}`, { job_role_id: task('devRole'), effective_from: '2026-01-10' }).expect(200),
  );
  expect(rewritten).toEqual(['parent', 'testerTask']);
});
