import { Writable } from 'node:stream';
import { budgetSettings, reportSettleFailures, settlePending } from '../../../src/finance/read-model/budget-watch';
import { createDrainer, Drainer } from '../../../src/finance/read-model/drainer';
import { logTime as writeLogStatement } from '../../../src/time-logs/time-logs.repository';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';
import { createTask, logTime, setRateCard } from '../../support/fixtures';
import { until } from '../../support/locks';
import { describeOnPostgres } from '../../support/backend';
import { TOTAL, budgetOf, budgetedProject, crossingsAfter } from './support';

/*
 * When a budget is settled (docs/finance-rules.md R28.5): a write marks its budget pending in its own
 * transaction and settles it once committed, before it answers, so its crossings are stored before
 * anyone reads; a time log that cannot reach a threshold leaves its mark for the next settle; what no
 * settle took (a write whose instance died after committing, a big project's whole recomputation) is
 * settled by the event feed's read, the budget read or the background drain, once. The tables are
 * read directly where a read through the API would settle first. Dev costs 100.00 an hour, so spent
 * is hours x 100.
 */
let h: Harness;
let drainer: Drainer | undefined;
beforeAll(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await drainer?.stop();
  drainer = undefined;
});
afterAll(() => h.close());

const hours = (n: number) => ({ seconds: n * 3600, logged_at: '2026-06-10T10:00:00Z' });

/** The crossings stored for the project (percent and spent), read from the tables, not through a read that settles. */
async function storedCrossings(projectId: string) {
  const rows: { data: { project_id: string; percent: number; spent: string } }[] = await h
    .db('events')
    .where({ team_id: h.teamId, type: 'budget.threshold_crossed' })
    .orderBy('occurred_at')
    .select('data');
  return rows
    .map((row) => (typeof row.data === 'string' ? JSON.parse(row.data) : row.data))
    .filter((data) => data.project_id === projectId)
    .map((data) => [data.percent, Number(data.spent)]);
}

const pending = async (projectId: string) =>
  Number((await h.db('budget_pending').where({ team_id: h.teamId, project_id: projectId }).count<{ n: string }[]>({ n: '*' }))[0]?.n);

/** A time log written as a write whose instance died right after committing: its statement, no settle. */
async function logWithoutSettle(taskId: string, memberId: string, n: number) {
  const logged = await writeLogStatement(h.db, h.teamId, { task_id: taskId, team_member_id: memberId, seconds: n * 3600, logged_at: '2026-06-10T10:00:00Z', note: null });
  expect(logged).toMatchObject({ taskFound: true, budgeted: true });
}

describe('a write answers with its crossings stored', () => {
  it('a time log', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50, 100] });
    await logTime(h.api, task.id, ann.id, hours(6)); // 600: past 50 %
    expect(await storedCrossings(project.id)).toEqual([[50, 600]]);
    expect(await pending(project.id)).toBe(0);
  });

  it('a rate card, which recomputes every task', async () => {
    const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    const other = await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, hours(2)); // 200
    await logTime(h.api, other.id, ann.id, hours(2)); // 400
    expect(await storedCrossings(project.id)).toEqual([]);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 150 }]); // 4 h x 150 = 600
    expect(await storedCrossings(project.id)).toEqual([[50, 600]]);
    expect(await pending(project.id)).toBe(0);
  });

  it('a fixed cost', async () => {
    const { project, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [100] });
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 1000 }).expect(200);
    expect(await storedCrossings(project.id)).toEqual([[100, 1000]]);
  });
});

describe('a time log', () => {
  it('that cannot reach a threshold leaves its mark, and the first that may settles them all, exactly', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    // Headroom 500. A log's bound is (its hours + 0.01) x the highest rate (100.00) + 1: 1 h 102, 3 h 302, 0.5 h 52.
    await logTime(h.api, task.id, ann.id, hours(1));
    await logTime(h.api, task.id, ann.id, hours(3));
    await logTime(h.api, task.id, ann.id, hours(0.5)); // bounds 456 < 500: 450 spent, nothing to settle yet
    expect(await pending(project.id)).toBe(3);
    // 0.6 h: its bound (62) would take the pending bounds past 500; settled with every log: 510.
    await logTime(h.api, task.id, ann.id, hours(0.6));
    expect(await pending(project.id)).toBe(0);
    expect(await storedCrossings(project.id)).toEqual([[50, 510]]);
  });

  it('settled after its task\'s figures were refreshed takes that task\'s share from them', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    const other = await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, hours(1));
    await logTime(h.api, task.id, ann.id, hours(1)); // 200, both waiting (bounds 204 < 500)
    await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200); // the task's stored figures current
    expect(await pending(project.id)).toBe(2);
    await logTime(h.api, other.id, ann.id, hours(3)); // bound 302 + 204 >= 500: settles all, 500
    expect(await storedCrossings(project.id)).toEqual([[50, 500]]);
    expect((await budgetOf(h.api, project.id)).money).toEqual({ budget: 1000, spent: 500, remaining: 500, percent_used: 50 });
  });

  it('is bounded by the highest rate, a member\'s own included', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    await h.api.put(`/api/projects/${project.id}/members/${ann.id}/rates`, { hourly_rate: 400, effective_from: '1970-01-01' }).expect(200);
    await logTime(h.api, task.id, ann.id, hours(1)); // 400: bound 1.01 x 400 + 1 = 405 < 500
    expect(await pending(project.id)).toBe(1);
    // 0.3 h at 400 is 120: 520. Bounded by the role's 100.00 it would look like 32 and wait.
    await logTime(h.api, task.id, ann.id, hours(0.3));
    expect(await storedCrossings(project.id)).toEqual([[50, 520]]);
  });

  it('in a monthly budget, waits only while the basis is of the current month and day', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50], budget_period: 'month' });
    await h.db('budget_watches').where({ team_id: h.teamId, project_id: project.id }).update({ basis_key: 'total 2020-01-01' });
    await logTime(h.api, task.id, ann.id, { seconds: 3600 }); // now: this month; the basis is stale, so it settles
    expect(await pending(project.id)).toBe(0);
    await logTime(h.api, task.id, ann.id, { seconds: 3600 }); // basis current: waits
    expect(await pending(project.id)).toBe(1);
  });
});

describeOnPostgres('PGlite runs one statement at a time, so no two logs wait side by side')('two time logs', () => {
  it('that waited side by side and together reach a threshold are settled by the drain at once', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    const other = await createTask(h.api, project.id, { estimated_hours: 1 });
    const log = { team_member_id: ann.id, seconds: 3 * 3600, logged_at: '2026-06-10T10:00:00Z', note: null };
    // One log's statement held open in a transaction while the other (on another task, so on other
    // running totals) runs: neither sees the other's mark, each bound (302) is below the headroom
    // (500), so both wait; together they make 600.
    await h.db.transaction(async (trx) => {
      expect(await writeLogStatement(trx, h.teamId, { ...log, task_id: task.id })).toMatchObject({ settle: undefined });
      expect(await writeLogStatement(h.db, h.teamId, { ...log, task_id: other.id })).toMatchObject({ settle: undefined });
    });
    expect(await pending(project.id)).toBe(2);
    drainer = createDrainer(h.db, createLogger('silent'), { pollMs: 1 });
    await until(async () => (await pending(project.id)) === 0);
    expect(await storedCrossings(project.id)).toEqual([[50, 600]]);
  });
});

describe('a settle that fails after the write committed', () => {
  it('leaves the write standing, is logged, and leaves its mark for the next settle', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    const lines: { msg: string; projectId?: string; err?: { message: string } }[] = [];
    const sink = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(JSON.parse(String(chunk)))) });
    reportSettleFailures(h.db, createLogger('warn', sink));
    // The settle's write of this project's watch fails (as on a database error), the write's own
    // statement not. Only this project's: test files running at once share the database.
    const name = `fail_settle_${project.id.replace(/-/g, '')}`;
    await h.db.raw(
      `create function ${name}() returns trigger language plpgsql as $$ begin
         if new.project_id = '${project.id}' then raise exception 'settle refused for the test'; end if;
         return new;
       end $$`,
    );
    await h.db.raw(`create trigger ${name} before update on budget_watches for each row execute function ${name}()`);
    try {
      await logTime(h.api, task.id, ann.id, hours(6)); // 600: may cross 50%, so settled at once, and refused
    } finally {
      await h.db.raw(`drop trigger ${name} on budget_watches`);
      await h.db.raw(`drop function ${name}()`);
    }
    expect(lines).toEqual([expect.objectContaining({ projectId: project.id, err: expect.objectContaining({ message: expect.stringContaining('settle refused for the test') }) })]);
    expect(lines[0]?.msg).toMatch(/settling a budget after a write failed/);
    expect(await storedCrossings(project.id)).toEqual([]);
    expect(await pending(project.id)).toBe(1);
    // The next settle (here the budget read's) takes it.
    expect((await budgetOf(h.api, project.id)).money).toMatchObject({ spent: 600 });
    expect(await storedCrossings(project.id)).toEqual([[50, 600]]);
    expect(await pending(project.id)).toBe(0);
  });
});

describe('a write that committed but never settled (its instance died)', () => {
  it('is settled by the event feed read, once, with what every committed write added', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50, 100] });
    await logTime(h.api, task.id, ann.id, hours(4)); // 400, its bound (402) below 500: left pending
    await logWithoutSettle(task.id, ann.id, 2); // 600
    await logWithoutSettle(task.id, ann.id, 5); // 1100
    expect(await storedCrossings(project.id)).toEqual([]);
    expect(await pending(project.id)).toBe(3);
    expect(await crossingsAfter(h.api, project.id)).toEqual([
      { project_id: project.id, kind: 'money', percent: 50, budget: 1000, spent: 1100, period: TOTAL },
      { project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1100, period: TOTAL },
    ]);
    expect(await pending(project.id)).toBe(0);
    expect(await crossingsAfter(h.api, project.id)).toHaveLength(2);
  });

  it('is settled by the budget read', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    await logWithoutSettle(task.id, ann.id, 7); // 700
    expect((await budgetOf(h.api, project.id)).money).toEqual({ budget: 1000, spent: 700, remaining: 300, percent_used: 70 });
    expect(await storedCrossings(project.id)).toEqual([[50, 700]]);
  });

  it('is settled by the next write, with its own', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    await logWithoutSettle(task.id, ann.id, 3); // 300
    await logTime(h.api, task.id, ann.id, hours(3)); // 600
    expect(await storedCrossings(project.id)).toEqual([[50, 600]]);
    expect(await pending(project.id)).toBe(0);
  });

  it('is settled by the background drain without any read', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [80] });
    await logWithoutSettle(task.id, ann.id, 9); // 900
    drainer = createDrainer(h.db, createLogger('silent'), { pollMs: 1 });
    await until(async () => (await pending(project.id)) === 0);
    expect(await storedCrossings(project.id)).toEqual([[80, 900]]);
  });
});

describe('a big project', () => {
  const backgroundTasks = budgetSettings.backgroundTasks;
  afterEach(() => {
    budgetSettings.backgroundTasks = backgroundTasks;
  });

  it('leaves a whole recomputation to the background, and the feed read settles it', async () => {
    const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    await createTask(h.api, project.id, { estimated_hours: 1 });
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 0 }).expect(200); // settled: the day's whole recomputation is done
    budgetSettings.backgroundTasks = 1; // two tasks: big
    // A write to a task's own figures recomputes that task only, before it answers, big project or not.
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 450 }).expect(200); // 450
    expect(await pending(project.id)).toBe(0);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 200 }]); // unchanged: nothing logged yet
    expect(await pending(project.id)).toBe(1);
    // Later writes wait behind it: a settle finds the whole recomputation pending, and leaves it too.
    await logTime(h.api, task.id, ann.id, hours(2.75)); // 450 + 2.75 h x 200 = 1000
    expect(await pending(project.id)).toBe(2);
    expect(await storedCrossings(project.id)).toEqual([]);
    expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 50, budget: 1000, spent: 1000, period: TOTAL }]);
    expect(await pending(project.id)).toBe(0);
  });

  it('in the background, waits for its stored figures to be current, then takes its spent from them', async () => {
    const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    const other = await createTask(h.api, project.id, { estimated_hours: 1 });
    await logTime(h.api, task.id, ann.id, hours(2)); // 200
    await h.api.put(`/api/project-finance/task/${other.id}/fixed-cost`, { fixed_cost: 100 }).expect(200); // 300, settled
    budgetSettings.backgroundTasks = 1;
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 150 }]); // 2 h x 150 + 100 = 400
    expect(await pending(project.id)).toBe(1);
    const background = { waitingAtLeast: 2000, patienceMs: 60_000 };
    await settlePending(h.db, undefined, background); // the stored figures are of before the rate card: it waits
    expect(await pending(project.id)).toBe(1);
    await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200); // brings them current
    await settlePending(h.db, undefined, background);
    expect(await pending(project.id)).toBe(0);
    expect((await budgetOf(h.api, project.id)).money).toEqual({ budget: 1000, spent: 400, remaining: 600, percent_used: 40 });
    await h.api.put(`/api/project-finance/task/${other.id}/fixed-cost`, { fixed_cost: 250 }).expect(200); // 550
    expect(await storedCrossings(project.id)).toEqual([[50, 550]]);
  });

  it('in the background, computes its spent anyway once its marks are older than its patience', async () => {
    const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50] });
    await createTask(h.api, project.id, { estimated_hours: 1 });
    await logTime(h.api, task.id, ann.id, hours(3)); // 300
    budgetSettings.backgroundTasks = 1;
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 200 }]); // 600: past 50 %
    await settlePending(h.db, undefined, { waitingAtLeast: 2000, patienceMs: 60_000 });
    expect(await storedCrossings(project.id)).toEqual([]);
    await settlePending(h.db, undefined, { waitingAtLeast: 2000, patienceMs: 0 });
    expect(await storedCrossings(project.id)).toEqual([[50, 600]]);
  });
});
