import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { crossingsAfter, feedEnd } from './support';
import { generator } from '../../support/random';

/*
 * Budgets under random writes (docs/finance-rules.md R28.2, R28.4, R28.5), against a second,
 * independent computation: after every write, the budget's spent equals the project list's unfiltered
 * totals (total_actual_cost and logged_hours, which the stored figures answer, not the budget's shares),
 * every threshold is crossed exactly when spent reaches it, and one budget.threshold_crossed event is
 * recorded for each threshold spent went from below to at or above. The writes mix what settles before
 * it answers, time logs that wait (their bound below the headroom), rates that recompute every task,
 * and reads in both orders, so a settle may take its shares from the stored figures or the calculator.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const PERCENTS = [10, 25, 50, 75, 100, 150];

it.each([11, 29])('keeps spent and crossings right through 40 random writes (seed %i)', async (seed) => {
  const rand = generator(seed);
  const dev = await createJobRole(h.api);
  const qa = await createJobRole(h.api);
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [
    { job_role_id: dev.id, hourly_rate: 100 },
    { job_role_id: qa.id, hourly_rate: 60.5 },
  ]);
  const people = [await createMember(h.api, { name: 'Ann' }), await createMember(h.api, { name: 'Bob' }), await createMember(h.api, { name: 'Cy' })];
  await addToProject(h.api, project.id, people[0]!.id, dev.id);
  await addToProject(h.api, project.id, people[1]!.id, qa.id);
  await addToProject(h.api, project.id, people[2]!.id, dev.id);
  const tasks = [];
  for (let i = 0; i < 4; i++) tasks.push(await createTask(h.api, project.id, { estimated_hours: 5, assignee_ids: [people[i % 3]!.id] }));
  await h.api.patch(`/api/projects/${project.id}`, { budget: 2000, hours_budget: 30, budget_alerts: PERCENTS }).expect(200);

  const logs: string[] = [];
  let before = { money: 0, hours: 0 };
  const start = await feedEnd(h.api);
  const expected = new Map<string, number>(); // kind:percent -> crossings expected so far
  for (let step = 0; step < 40; step++) {
    const roll = rand.next();
    let what: string;
    if (roll < 0.55 || logs.length === 0) {
      const seconds = 60 * (1 + rand.int(240));
      what = `log ${seconds} s`;
      const day = `2026-0${1 + rand.int(6)}-1${rand.int(9)}T10:00:00Z`;
      logs.push((await logTime(h.api, rand.pick(tasks).id, rand.pick(people).id, { seconds, logged_at: day })).id);
    } else if (roll < 0.7) {
      const [log] = logs.splice(rand.int(logs.length), 1);
      what = 'delete a log';
      await h.api.delete(`/api/time-logs/${log}`).expect(200);
    } else if (roll < 0.82) {
      const amount = rand.int(400);
      what = `fixed cost ${amount}`;
      await h.api.put(`/api/project-finance/task/${rand.pick(tasks).id}/fixed-cost`, { fixed_cost: amount }).expect(200);
    } else if (roll < 0.92) {
      const rate = 40 + rand.int(120);
      what = `rate card Dev ${rate} from 2026-03-01`;
      await setRateCard(h.api, project.id, [{ job_role_id: dev.id, hourly_rate: rate }], '2026-03-01');
    } else {
      const rate = 20 + rand.int(200);
      what = `Bob's own rate ${rate}`;
      await h.api.put(`/api/projects/${project.id}/members/${people[1]!.id}/rates`, { hourly_rate: rate, effective_from: '2026-02-01' }).expect(200);
    }
    // Reads in both orders: the list first brings the stored figures current, so the budget's settle
    // takes shares from them; the budget first settles from the calculator.
    const readList = async () => (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.totals;
    const readBudget = async () => (await h.api.get(`/api/projects/${project.id}/budget`).expect(200)).body.body;
    let totals;
    let budget;
    if (step % 2 === 0) {
      totals = await readList();
      budget = await readBudget();
    } else {
      budget = await readBudget();
      totals = await readList();
    }
    const now = { money: budget.money.spent as number, hours: budget.hours.spent as number };
    const context = `seed ${seed}, step ${step} (${what})`;
    expect({ context, money: now.money, hours: now.hours }).toEqual({ context, money: totals.total_actual_cost, hours: totals.logged_hours });
    for (const alert of budget.alerts as { kind: 'money' | 'hours'; percent: number; crossed: boolean }[]) {
      const limit = (alert.kind === 'money' ? 2000 : 30) * alert.percent;
      expect({ context, alert, crossed: alert.crossed }).toEqual({ context, alert, crossed: now[alert.kind] * 100 >= limit - 1e-9 });
      const key = `${alert.kind}:${alert.percent}`;
      if (before[alert.kind] * 100 < limit - 1e-9 && now[alert.kind] * 100 >= limit - 1e-9) expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    before = now;
  }
  const recorded = new Map<string, number>();
  for (const crossing of await crossingsAfter(h.api, project.id, start)) {
    const key = `${crossing.kind}:${crossing.percent}`;
    recorded.set(key, (recorded.get(key) ?? 0) + 1);
  }
  expect(Object.fromEntries([...recorded].sort())).toEqual(Object.fromEntries([...expected].sort()));
  expect(expected.size).toBeGreaterThan(0);
}, 180_000);
