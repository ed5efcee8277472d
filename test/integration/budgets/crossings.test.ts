import { Harness, startHarness } from '../../support/harness';
import { createJobRole, createTask, logTime } from '../../support/fixtures';
import { TOTAL, budgetOf, budgetedProject, crossingsAfter } from './support';

/*
 * Crossings by each cause (docs/finance-rules.md R28.4, R28.5), with expectations
 * computed by hand: Dev costs 100.00 an hour, so spent is hours x 100.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const hours = (n: number) => ({ seconds: n * 3600, logged_at: '2026-06-10T10:00:00Z' });

describe('a threshold crossed by', () => {
  it('a time log added, once, and again after a deleted log re-armed it', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [50, 100] });
    await logTime(h.api, task.id, ann.id, hours(4)); // 400: 40 %
    expect(await crossingsAfter(h.api, project.id)).toEqual([]);
    await logTime(h.api, task.id, ann.id, hours(1.5)); // 550: 55 %, past 50 %
    expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 50, budget: 1000, spent: 550, period: TOTAL }]);
    await logTime(h.api, task.id, ann.id, hours(0.5)); // 600: nothing new
    const big = await logTime(h.api, task.id, ann.id, hours(5)); // 1100: past 100 %
    expect((await crossingsAfter(h.api, project.id)).map((c) => [c.percent, c.spent])).toEqual([[50, 550], [100, 1100]]);
    expect(await budgetOf(h.api, project.id)).toMatchObject({
      project_id: project.id,
      currency: 'USD',
      period: TOTAL,
      money: { budget: 1000, spent: 1100, remaining: -100, percent_used: 110 },
      hours: { budget: null, spent: 11, remaining: null, percent_used: null },
      alerts: [
        { kind: 'money', percent: 50, crossed: true, crossed_at: expect.any(String) },
        { kind: 'money', percent: 100, crossed: true, crossed_at: expect.any(String) },
      ],
    });

    // Deleted: 600, below 100 % again (re-armed, no event); 50 % stays crossed.
    await h.api.delete(`/api/time-logs/${big.id}`).expect(200);
    expect((await crossingsAfter(h.api, project.id)).length).toBe(2);
    expect((await budgetOf(h.api, project.id)).alerts).toEqual([
      { kind: 'money', percent: 50, crossed: true, crossed_at: expect.any(String) },
      { kind: 'money', percent: 100, crossed: false, crossed_at: null },
    ]);
    // Past 100 % again: a second crossing of it (600 + 450 = 1050).
    await logTime(h.api, task.id, ann.id, hours(4.5));
    expect((await crossingsAfter(h.api, project.id)).map((c) => [c.percent, c.spent])).toEqual([[50, 550], [100, 1100], [100, 1050]]);
  });

  it('a fixed cost (total budgets count fixed costs)', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [80] });
    await logTime(h.api, task.id, ann.id, hours(7)); // 700
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 99.99 }).expect(200); // 799.99: not yet
    expect(await crossingsAfter(h.api, project.id)).toEqual([]);
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 100 }).expect(200); // 800.00: 80 % exactly
    expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 80, budget: 1000, spent: 800, period: TOTAL }]);
  });

  it('an archived task re-arms, and a log on another task crosses again', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [80] });
    const other = await createTask(h.api, project.id, { assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, hours(9)); // 900
    await logTime(h.api, other.id, ann.id, hours(1)); // 1000
    expect((await crossingsAfter(h.api, project.id)).map((c) => c.spent)).toEqual([900]);
    await h.api.delete(`/api/tasks/${task.id}`).expect(200); // 100: archived tasks count nowhere
    expect(await budgetOf(h.api, project.id)).toMatchObject({ money: { spent: 100, remaining: 900, percent_used: 10 }, alerts: [{ percent: 80, crossed: false }] });
    await logTime(h.api, other.id, ann.id, hours(7)); // 800
    expect((await crossingsAfter(h.api, project.id)).map((c) => c.spent)).toEqual([900, 800]);
  });

  it('a back-dated rate card change', async () => {
    const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [100] });
    await logTime(h.api, task.id, ann.id, hours(8)); // 8 h on 2026-06-10 at 100: 800
    // 130 from 2026-01-01: the June hours cost 8 x 130 = 1040.
    await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: role.id, hourly_rate: 130 }], effective_from: '2026-01-01' }).expect(200);
    expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1040, period: TOTAL }]);
    // Back to 100 from the same day: 800, re-armed.
    await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: role.id, hourly_rate: 100 }], effective_from: '2026-01-01' }).expect(200);
    expect((await budgetOf(h.api, project.id)).alerts).toEqual([{ kind: 'money', percent: 100, crossed: false, crossed_at: null }]);
  });

  it('a role change from a past day', async () => {
    const { project, role, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [100] });
    const lead = await createJobRole(h.api);
    await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: role.id, hourly_rate: 100 }, { job_role_id: lead.id, hourly_rate: 150 }], effective_from: '1970-01-01' }).expect(200);
    await logTime(h.api, task.id, ann.id, hours(7)); // 700 as a Dev
    // Ann a Lead from 2026-01-01: the June hours cost 7 x 150 = 1050.
    await h.api.put(`/api/projects/${project.id}/members/${ann.id}`, { job_role_id: lead.id, effective_from: '2026-01-01' }).expect(200);
    expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: 1050, period: TOTAL }]);
  });

  it("a member's own rate: evaluated like any write, spent as the project's figures have it", async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 1000, budget_alerts: [100] });
    await logTime(h.api, task.id, ann.id, hours(8)); // 800
    // A bill rate is revenue, not spent: nothing.
    await h.api.put(`/api/projects/${project.id}/members/${ann.id}/rates`, { bill_rate: 500, effective_from: '2026-01-01' }).expect(200);
    expect(await crossingsAfter(h.api, project.id)).toEqual([]);
    // Her own cost rate of 125 from 2026-01-01. Spent is the list's total_actual_cost, whichever rates
    // the figures cost her hours at (8 x 125 = 1000 once they take a member's own rate, 800 before).
    await h.api.put(`/api/projects/${project.id}/members/${ann.id}/rates`, { hourly_rate: 125, effective_from: '2026-01-01' }).expect(200);
    const listed = (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.totals.total_actual_cost as number;
    expect([800, 1000]).toContain(listed);
    expect((await budgetOf(h.api, project.id)).money.spent).toBe(listed);
    const expected = listed >= 1000 ? [{ project_id: project.id, kind: 'money', percent: 100, budget: 1000, spent: listed, period: TOTAL }] : [];
    expect(await crossingsAfter(h.api, project.id)).toEqual(expected);
  });

  it('a lowered budget, a budget set, and a threshold added that spent already reaches', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 2000, budget_alerts: [80] });
    await logTime(h.api, task.id, ann.id, hours(9)); // 900: 45 % of 2000
    expect(await crossingsAfter(h.api, project.id)).toEqual([]);
    await h.api.patch(`/api/projects/${project.id}`, { budget: 1000 }).expect(200); // 90 % of 1000
    expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'money', percent: 80, budget: 1000, spent: 900, period: TOTAL }]);
    await h.api.patch(`/api/projects/${project.id}`, { budget_alerts: [50, 80] }).expect(200); // 50 % added: reached
    await h.api.patch(`/api/projects/${project.id}`, { budget_alerts: [80, 50] }).expect(200); // the same thresholds: nothing
    await h.api.patch(`/api/projects/${project.id}`, { name: `${project.name} renamed` }).expect(200); // nothing
    expect((await crossingsAfter(h.api, project.id)).map((c) => [c.percent, c.budget, c.spent])).toEqual([[80, 1000, 900], [50, 1000, 900]]);

    // No budget at all, then one: default alerts 80 and 100; 900 of 1000 reaches 80 %.
    const fresh = await budgetedProject(h.api, {});
    await logTime(h.api, fresh.task.id, fresh.ann.id, hours(9));
    expect(await budgetOf(h.api, fresh.project.id)).toMatchObject({ money: { budget: null, spent: 900, remaining: null, percent_used: null }, alerts: [] });
    await h.api.patch(`/api/projects/${fresh.project.id}`, { budget: 1000 }).expect(200);
    expect(await crossingsAfter(h.api, fresh.project.id)).toEqual([{ project_id: fresh.project.id, kind: 'money', percent: 80, budget: 1000, spent: 900, period: TOTAL }]);
    // Removed, then set again: counted again (removing re-armed it).
    await h.api.patch(`/api/projects/${fresh.project.id}`, { budget: null }).expect(200);
    await logTime(h.api, fresh.task.id, fresh.ann.id, hours(1)); // 1000, on a project without a budget now
    await h.api.patch(`/api/projects/${fresh.project.id}`, { budget: 1000 }).expect(200);
    expect((await crossingsAfter(h.api, fresh.project.id)).map((c) => [c.percent, c.spent])).toEqual([[80, 900], [80, 1000], [100, 1000]]);
  });

  it('hours against an hours budget, beside money', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 10000, hours_budget: 10, budget_alerts: [80] });
    await logTime(h.api, task.id, ann.id, { seconds: 4000, logged_at: '2026-06-10T10:00:00Z' }); // 1.11 h
    await logTime(h.api, task.id, ann.id, { seconds: 24804, logged_at: '2026-06-10T12:00:00Z' }); // 6.89 h: 8.00 h in all (80 %)
    expect(await crossingsAfter(h.api, project.id)).toEqual([{ project_id: project.id, kind: 'hours', percent: 80, budget: 10, spent: 8, period: TOTAL }]);
    // 4000 s is 1.11 h and 24,804 s 6.89 h (R5.2 rounds each member's seconds on the task: 28,804 s = 8.0011 h -> 8 h).
    expect(await budgetOf(h.api, project.id)).toMatchObject({
      money: { budget: 10000, spent: 800, remaining: 9200, percent_used: 8 },
      hours: { budget: 10, spent: 8, remaining: 2, percent_used: 80 },
      alerts: [
        { kind: 'money', percent: 80, crossed: false, crossed_at: null },
        { kind: 'hours', percent: 80, crossed: true, crossed_at: expect.any(String) },
      ],
    });
  });

  it('a budget of zero has no percentage and crosses nothing', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 0, budget_alerts: [1] });
    await logTime(h.api, task.id, ann.id, hours(1));
    expect(await budgetOf(h.api, project.id)).toMatchObject({ money: { budget: 0, spent: 100, remaining: null, percent_used: null } });
    expect(await crossingsAfter(h.api, project.id)).toEqual([]);
  });

  it('percent_used rounded half away from zero to 2 decimals', async () => {
    const { project, ann, task } = await budgetedProject(h.api, { budget: 300, budget_alerts: [1000] });
    await logTime(h.api, task.id, ann.id, hours(1)); // 100 of 300: 33.333... -> 33.33
    expect((await budgetOf(h.api, project.id)).money).toEqual({ budget: 300, spent: 100, remaining: 200, percent_used: 33.33 });
    await logTime(h.api, task.id, ann.id, { seconds: 36, logged_at: '2026-06-10T10:00:00Z' }); // 3636 s = 1.01 h: 101 of 300 = 33.666... -> 33.67
    expect((await budgetOf(h.api, project.id)).money).toEqual({ budget: 300, spent: 101, remaining: 199, percent_used: 33.67 });
  });
});
