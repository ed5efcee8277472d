import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Api, Harness, startHarness } from '../../support/harness';
import { RunningService, kill, startService } from '../../support/processes';
import { holdLocks, untilWaiting } from '../../support/locks';
import { logTime } from '../../support/fixtures';
import { budgetOf, budgetedProject, crossingsAfter } from './support';

/*
 * Crossings exactly once under concurrent writes (CONTRACT section 9 rule 4): writes to a budgeted
 * project evaluate its thresholds one at a time, under the project's budget lock, each after its own
 * change (src/finance/read-model/budget-watch.ts). On PostgreSQL, from two instances of the service
 * (this test's app and a second process, each with its own pool); on PGlite from one. Dev costs
 * 100.00 an hour.
 */
let h: Harness;
let second: RunningService | undefined;
let other: Api;
beforeAll(async () => {
  h = await startHarness();
  const backend = backendFromEnv();
  if (backend.kind !== 'postgres') return;
  second = await startService({ DATABASE_URL: backend.url, LOG_LEVEL: 'warn' });
  other = new Api(second.baseUrl, h.api.token);
});
afterAll(async () => {
  if (second) await kill(second);
  await h.close();
});

const hour = { seconds: 3600, logged_at: '2026-06-10T10:00:00Z' };

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
    // The test holds the project's budget lock: both logs are written, then wait for it. Alone each
    // makes 460; together 520, past 50 %. Without the lock both would evaluate 460 and miss it.
    const held = await holdLocks(h.db, (trx) =>
      trx.raw('select 1 from budget_watches where team_id = ? and project_id = ? for update', [h.teamId, project.id]),
    );
    const log = { seconds: 2160, logged_at: '2026-06-10T12:00:00Z' }; // 0.6 h: 60.00
    const writes = [logTime(h.api, task.id, ann.id, log), logTime(other, task.id, ann.id, log)];
    try {
      await untilWaiting(h.db, [held.pid], 2);
    } finally {
      await held.trx.commit();
    }
    await Promise.all(writes);
    expect(await crossingsAfter(h.api, project.id)).toEqual([
      { project_id: project.id, kind: 'money', percent: 50, budget: 1000, spent: 520, period: { kind: 'total', from: null, to: null } },
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
});
