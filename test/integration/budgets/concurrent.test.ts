import { describeOnPostgres } from '../../support/backend';
import { Api, Harness, startHarness } from '../../support/harness';
import { RunningService, kill, startSecondInstance } from '../../support/processes';
import { holdLocks, until } from '../../support/locks';
import { logTime } from '../../support/fixtures';
import { budgetOf, budgetedProject, crossingsAfter } from './support';
import { budgetLock } from '../../../src/finance/read-model/budget-watch';

/*
 * Crossings exactly once under concurrent writes (docs/finance-rules.md R28.5): once a write to a
 * budgeted project commits, its budget is settled under the project's budget lock, one settle at a
 * time, each taking every write committed before it (src/finance/read-model/budget-watch.ts). On PostgreSQL, from two instances of the service
 * (this test's app and a second process, each with its own pool); on PGlite from one. Dev costs
 * 100.00 an hour.
 */
let h: Harness;
let second: RunningService | undefined;
let other: Api;
beforeAll(async () => {
  h = await startHarness();
  const started = await startSecondInstance(h);
  second = started?.second;
  if (started) other = started.other;
});
afterAll(async () => {
  if (second) await kill(second);
  await h.close();
});

const hour = { seconds: 3600, logged_at: '2026-06-10T10:00:00Z' };

/** The task's committed time logs. */
const logsOf = async (taskId: string) => Number((await h.db('time_logs').where({ team_id: h.teamId, task_id: taskId }).count<{ n: string }[]>({ n: '*' }))[0]?.n);

/**
 * The same log through each instance while the test holds the project's budget lock, released once both
 * have committed: a log that may cross settles behind the lock (the second instance's settle after the
 * first's); one whose bound stays below the headroom, seeing no other's mark, leaves its mark for the
 * next settle (R28.5: the other instance's drain, or the feed read). Which of them a log does depends
 * on which commits first, so the test waits for the commits, not for a number of settles.
 */
async function bothBehindTheLock(projectId: string, taskId: string, memberId: string, log: { seconds: number; logged_at: string }) {
  const before = await logsOf(taskId);
  const held = await holdLocks(h.db, (trx) => trx.raw(...budgetLock(h.teamId, projectId)));
  const writes = [logTime(h.api, taskId, memberId, log), logTime(other, taskId, memberId, log)];
  try {
    await until(async () => (await logsOf(taskId)) >= before + 2);
  } finally {
    await held.trx.commit();
  }
  await Promise.all(writes);
}

it('records each threshold once when many logs land at once', async () => {
  const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50, 100] });
  await Promise.all(Array.from({ length: 20 }, () => logTime(h.api, task.id, ann.id, hour)));
  const crossings = await crossingsAfter(h.api, project.id);
  expect(crossings.map((c) => c.percent).sort((a, b) => a - b)).toEqual([50, 100]);
  expect((await budgetOf(h.api, project.id)).money).toEqual({ budget: 1000, spent: 2000, remaining: -1000, percent_used: 200 });
});

describeOnPostgres('one process opens PGlite, so there is no second instance')('two instances writing at once', () => {
  it('record the crossing two logs make together, once, whichever evaluates second', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    await logTime(h.api, task.id, ann.id, { seconds: 4 * 3600, logged_at: '2026-06-10T10:00:00Z' }); // 400
    // The test holds the project's budget lock while both logs, one through each instance, commit.
    // Alone each makes 460; together 520, past 50 %. Evaluated side by side, each would see 460 and miss it.
    await bothBehindTheLock(project.id, task.id, ann.id, { seconds: 2160, logged_at: '2026-06-10T12:00:00Z' }); // 0.6 h each: 60.00
    expect(await crossingsAfter(h.api, project.id)).toEqual([
      { project_id: project.id, kind: 'money', percent: 50, budget: 1000, spent: 520, period: { kind: 'total', from: null, to: null } },
    ]);
  }, 60_000);

  it('settle two logs on one cost line together, rounding the line once', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { hours_budget: 4.02, budget_alerts: [100] });
    await logTime(h.api, task.id, ann.id, { seconds: 14_400, logged_at: '2026-06-10T10:00:00Z' }); // 4.00 h
    // 18 s each (0.005 h) on the same line: 14,418 s is 4.01 h, 14,436 s still 4.01 h (R15.3's rounding of
    // the line). A log that costed its 18 s against the line as it was before the other (14,400 s) would
    // add 0.01 h too, 4.02 h: past 100 %.
    await bothBehindTheLock(project.id, task.id, ann.id, { seconds: 18, logged_at: '2026-06-10T12:00:00Z' });
    expect(await crossingsAfter(h.api, project.id)).toEqual([]);
    // 36 s more: 14,472 s, 4.02 h, 100 % of 4.02, crossed once.
    await logTime(other, task.id, ann.id, { seconds: 36, logged_at: '2026-06-10T13:00:00Z' });
    expect(await crossingsAfter(h.api, project.id)).toEqual([
      { project_id: project.id, kind: 'hours', percent: 100, budget: 4.02, spent: 4.02, period: { kind: 'total', from: null, to: null } },
    ]);
  }, 60_000);

  it('record each threshold once under a burst split between them, with deletes re-arming', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50, 100] });
    const logs = await Promise.all(Array.from({ length: 16 }, (_, i) => logTime(i % 2 ? other : h.api, task.id, ann.id, hour)));
    expect((await crossingsAfter(h.api, project.id)).map((c) => c.percent).sort((a, b) => a - b)).toEqual([50, 100]); // 1600
    // Ten deleted at once through both: 600, below 100 % (re-armed), still past 50 %.
    await Promise.all(logs.slice(0, 10).map((l, i) => (i % 2 ? other : h.api).delete(`/api/time-logs/${l.id}`).expect(200)));
    expect((await budgetOf(other, project.id)).alerts.map((a: { crossed: boolean }) => a.crossed)).toEqual([true, false]);
    // Five more at once: 1100, past 100 % a second time, once.
    await Promise.all(Array.from({ length: 5 }, (_, i) => logTime(i % 2 ? other : h.api, task.id, ann.id, hour)));
    const crossings = await crossingsAfter(h.api, project.id);
    expect(crossings.map((c) => c.percent).sort((a, b) => a - b)).toEqual([50, 100, 100]);
    expect(crossings[2]).toMatchObject({ percent: 100, budget: 1000 });
  }, 60_000);

  it('never deadlock when logs are added and deleted at once on one task and member', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50, 100] });
    const logs = await Promise.all(Array.from({ length: 8 }, () => logTime(h.api, task.id, ann.id, hour))); // 800
    // Adds and deletes of the same running totals, through both instances, all at once: 800 - 6 + 4 = 600.
    const deletes = logs.slice(0, 6).map((l, i) => (i % 2 ? other : h.api).delete(`/api/time-logs/${l.id}`).expect(200));
    const adds = Array.from({ length: 4 }, (_, i) => logTime(i % 2 ? h.api : other, task.id, ann.id, hour));
    await Promise.all([...deletes, ...adds]);
    const status = await budgetOf(h.api, project.id);
    expect(status.money).toEqual({ budget: 1000, spent: 600, remaining: 400, percent_used: 60 });
    expect(status.alerts.map((a: { crossed: boolean }) => a.crossed)).toEqual([true, false]);
    // How many crossings depends on the order the writes evaluated in (all deletes first re-arms 50 %, and
    // the adds cross it again); each one recorded a spent that reaches its threshold, and a last one
    // of 50 % exists since it ends crossed.
    const crossings = await crossingsAfter(h.api, project.id);
    expect(crossings.filter((c) => c.percent === 50).length).toBeGreaterThanOrEqual(1);
    for (const c of crossings) expect(c.spent * 100).toBeGreaterThanOrEqual(c.budget * c.percent);
  }, 60_000);
});
