import { Harness, startHarness } from '../../support/harness';
import {
  TaskSummary,
  addToProject,
  breakdown,
  createJobRole,
  createMember,
  createProject,
  createTask,
  logTime,
} from '../../support/fixtures';
import { setRateCard } from '../../support/fixtures';

type Row = TaskSummary & {
  parent_task_id: string | null;
  sub_tasks_count: number;
  variance: number;
  status: string | null;
  priority: string | null;
  phase: string | null;
  assignees: { team_member_id: string; name: string; avatar_url: string | null; job_title_name: string; hourly_rate: number }[];
};
type ListBody = {
  project: { id: string; name: string; currency: string; budget: number | null };
  tasks: Row[];
  totals: Record<string, number>;
  groups?: ({ group_name: string; task_ids: string[] } & Record<string, number>)[];
};

const SUMMARY_FIELDS = [
  'id', 'name', 'project_id', 'billable', 'currency', 'estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost',
  'total_estimated_cost', 'total_actual_cost', 'estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin', 'has_missing_rates',
] as const;
const SUM_FIELDS = [
  'estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost', 'total_estimated_cost', 'total_actual_cost',
  'estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin', 'variance',
] as const;

const summaryOf = (row: Row) => Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, row[f]]));
const cents = (v: number) => Math.round(v * 100);

let h: Harness;
let projectId: string;
let ids: Record<string, string>;
let ann: string, ben: string, zed: string;

/*
 * Project (USD), Dev 100/h, QA 40/h:
 *   Website (billable, 10 h, Ann+Ben, fixed 100; Ann logged 2 h)        status doing, phase Build
 *     ├ API (non-billable, 4 h, Ben, fixed 50; Ben logged 1 h)          status done
 *     │   └ Docs (billable, 2 h, Ann; Zed logged 0.5 h, not assigned)    status doing
 *     └ Old (archived: 100 h, fixed 1000)
 *   Ops (non-billable, 6 h, no assignees, fixed 20; Ben logged 3 h)     status null
 */
beforeAll(async () => {
  h = await startHarness();
  const dev = await createJobRole(h.api, 'Dev');
  const qa = await createJobRole(h.api, 'QA');
  const project = await createProject(h.api, { budget: 25000.5 });
  projectId = project.id;
  await setRateCard(h.api, projectId, [{ job_role_id: dev.id, hourly_rate: 100 }, { job_role_id: qa.id, hourly_rate: 40 }]);
  ann = (await createMember(h.api, { name: 'Ann' })).id;
  ben = (await createMember(h.api, { name: 'Ben' })).id;
  zed = (await createMember(h.api, { name: 'Zed' })).id;
  await addToProject(h.api, projectId, ann, dev.id);
  await addToProject(h.api, projectId, ben, qa.id);

  const website = await createTask(h.api, projectId, { name: 'Website', estimated_hours: 10, fixed_cost: 100, assignee_ids: [ann, ben], status: 'doing', phase: 'Build', priority: 'high' });
  const api = await createTask(h.api, projectId, { name: 'API', parent_task_id: website.id, billable: false, estimated_hours: 4, fixed_cost: 50, assignee_ids: [ben], status: 'done' });
  const docs = await createTask(h.api, projectId, { name: 'Docs', parent_task_id: api.id, estimated_hours: 2, assignee_ids: [ann], status: 'doing' });
  const old = await createTask(h.api, projectId, { name: 'Old', parent_task_id: website.id, estimated_hours: 100, fixed_cost: 1000 });
  const ops = await createTask(h.api, projectId, { name: 'Ops', billable: false, estimated_hours: 6, fixed_cost: 20 });
  await logTime(h.api, website.id, ann, { hours: 2 });
  await logTime(h.api, api.id, ben, { hours: 1 });
  await logTime(h.api, docs.id, zed, { seconds: 1800 });
  await logTime(h.api, ops.id, ben, { hours: 3 });
  await h.api.delete(`/api/tasks/${old.id}`).expect(200);
  ids = { website: website.id, api: api.id, docs: docs.id, ops: ops.id, old: old.id };
});

afterAll(() => h.close());

async function list(query = ''): Promise<ListBody> {
  const res = await h.api.get(`/api/project-finance/project/${projectId}/tasks${query}`).expect(200);
  expect(res.body.success).toBe(true);
  return res.body.body;
}

function expectTotalsAreSums(body: ListBody) {
  for (const field of SUM_FIELDS) {
    expect(cents(body.totals[field] as number)).toBe(body.tasks.reduce((s, r) => s + cents(r[field] as number), 0));
  }
}

describe('GET /api/project-finance/project/:project_id/tasks', () => {
  it('lists top-level tasks with their subtrees rolled up, by hand', async () => {
    const body = await list();
    expect(body.project).toEqual({ id: projectId, name: expect.any(String), currency: 'USD', budget: 25000.5, rate_unit: 'hour', hours_per_day: 8 });
    expect(body.tasks.map((r) => r.name)).toEqual(['Website', 'Ops']);
    const website = body.tasks[0] as Row;
    // Website: 10 h (Ann 5 x 100 + Ben 5 x 40 = 700), logged Ann 2 h = 200.
    // API: 4 h Ben x 40 = 160, logged 1 h = 40.   Docs: 2 h Ann = 200, Zed 0.5 h at 0.
    expect(website).toMatchObject({
      estimated_hours: 16,
      logged_hours: 3.5,
      estimated_labor_cost: 1060,
      actual_labor_cost: 240,
      fixed_cost: 150,
      total_estimated_cost: 1210,
      total_actual_cost: 390,
      variance: 820,
      sub_tasks_count: 1,
      parent_task_id: null,
      status: 'doing',
      priority: 'high',
      phase: 'Build',
      billable: true,
      currency: 'USD',
    });
    expect(website.assignees).toEqual([
      { team_member_id: ann, name: 'Ann', avatar_url: null, job_title_name: 'Dev', hourly_rate: 100 },
      { team_member_id: ben, name: 'Ben', avatar_url: null, job_title_name: 'QA', hourly_rate: 40 },
    ]);
    // Ops: no assignees, 3 h logged by Ben = 120, fixed 20.
    expect(body.tasks[1]).toMatchObject({ estimated_hours: 6, estimated_labor_cost: 0, actual_labor_cost: 120, total_estimated_cost: 20, total_actual_cost: 140, variance: -120, assignees: [], status: null });
    expect(body.totals).toEqual({
      estimated_hours: 22,
      logged_hours: 6.5,
      estimated_labor_cost: 1060,
      actual_labor_cost: 360,
      fixed_cost: 170,
      total_estimated_cost: 1230,
      total_actual_cost: 530,
      estimated_revenue: 0,
      actual_revenue: 0,
      estimated_margin: -1230,
      actual_margin: -530,
      // Someone of the project has no rate on a day that counts (R25).
      has_missing_rates: true,
      variance: 700,
    });
    expectTotalsAreSums(body);
    expect(body.groups).toBeUndefined();
  });

  it('makes every unfiltered row equal its breakdown (with subtasks for parents)', async () => {
    for (const query of ['', `?parent_task_id=${ids.website}`, `?parent_task_id=${ids.api}`]) {
      for (const row of (await list(query)).tasks) {
        const b = await breakdown(h.api, row.id, row.sub_tasks_count > 0);
        expect(summaryOf(row)).toEqual(b.task);
      }
    }
  });

  it('lists the direct children of parent_task_id', async () => {
    const children = await list(`?parent_task_id=${ids.website}`);
    expect(children.tasks.map((r) => [r.name, r.parent_task_id, r.sub_tasks_count])).toEqual([['API', ids.website, 1]]);
    const leaves = await list(`?parent_task_id=${ids.api}`);
    expect(leaves.tasks.map((r) => [r.name, r.sub_tasks_count])).toEqual([['Docs', 0]]);
    expectTotalsAreSums(leaves);
    expect((await list(`?parent_task_id=${ids.docs}`)).tasks).toEqual([]);
  });

  it('applies billable_filter at every level', async () => {
    const billable = await list('?billable_filter=billable');
    // Website's own figures and Docs (billable, under the non-billable API) count; API's own do not.
    expect(billable.tasks.map((r) => r.name)).toEqual(['Website']);
    expect(billable.tasks[0]).toMatchObject({ estimated_hours: 12, estimated_labor_cost: 900, actual_labor_cost: 200, fixed_cost: 100, sub_tasks_count: 1 });
    const billableChildren = await list(`?billable_filter=billable&parent_task_id=${ids.website}`);
    // API is listed because Docs passes, but its figures are Docs' alone.
    expect(billableChildren.tasks[0]).toMatchObject({ name: 'API', estimated_hours: 2, estimated_labor_cost: 200, fixed_cost: 0, sub_tasks_count: 1 });

    const nonBillable = await list('?billable_filter=non-billable');
    expect(nonBillable.tasks.map((r) => [r.name, r.estimated_hours, r.fixed_cost, r.sub_tasks_count])).toEqual([
      ['Website', 4, 50, 1],
      ['Ops', 6, 20, 0],
    ]);
    expectTotalsAreSums(nonBillable);
    const all = await list('?billable_filter=all');
    for (const field of SUM_FIELDS) {
      expect(cents(all.totals[field] as number)).toBe(cents(billable.totals[field] as number) + cents(nonBillable.totals[field] as number));
    }
  });

  it('groups by status, priority or phase with a "None" group last', async () => {
    const byStatus = await list('?group_by=status');
    expect(byStatus.groups?.map((g) => [g.group_name, g.task_ids])).toEqual([
      ['doing', [ids.website]],
      ['None', [ids.ops]],
    ]);
    const doing = byStatus.groups?.[0];
    expect(doing).toMatchObject({ estimated_hours: 16, total_estimated_cost: 1210, variance: 820 });
    const byPhase = await list(`?group_by=phase&parent_task_id=${ids.api}`);
    expect(byPhase.groups).toEqual([expect.objectContaining({ group_name: 'None', task_ids: [ids.docs], estimated_hours: 2 })]);
    // `phases` is the contract's alias of `phase`.
    expect(await list(`?group_by=phases&parent_task_id=${ids.api}`)).toEqual(byPhase);
    const byPriority = await list('?group_by=priority');
    for (const field of SUM_FIELDS) {
      expect(byPriority.groups?.reduce((s, g) => s + cents(g[field] as number), 0)).toBe(cents(byPriority.totals[field] as number));
    }
  });

  it('writes any name and label exactly, and orders groups by code point', async () => {
    // PostgreSQL renders list rows: quotes, backslashes, HTML and characters outside the BMP must come
    // back as they were sent, and groups sort by code point (U+FF21 before an emoji; UTF-16 would not).
    const project = await createProject(h.api, { currency: 'EUR' });
    const labels = ['b', 'B', '\u00C4 "q" \\ </script>', '\uFF21', '\u{1F600}', null];
    const created: { id: string; name: string; status: string | null }[] = [];
    for (const [i, status] of labels.entries()) {
      const name = `${status ?? 'none'} \u2028 \u{1F4B6} "${i}" \\n`;
      const task = await createTask(h.api, project.id, { name, estimated_hours: i + 1 });
      if (status !== null) await h.api.patch(`/api/tasks/${task.id}`, { status }).expect(200);
      created.push({ id: task.id, name, status });
    }
    const res = await h.api.get(`/api/project-finance/project/${project.id}/tasks?group_by=status`).expect(200);
    const body: ListBody = res.body.body;
    expect(body.tasks.map((r) => [r.id, r.name, r.status, r.currency, r.estimated_hours])).toEqual(created.map((c, i) => [c.id, c.name, c.status, 'EUR', i + 1]));
    const idAt = (i: number) => created[i]?.id;
    expect(body.groups?.map((g) => [g.group_name, g.task_ids, g.estimated_hours])).toEqual([
      ['B', [idAt(1)], 2],
      ['b', [idAt(0)], 1],
      [labels[2], [idAt(2)], 3],
      ['\uFF21', [idAt(3)], 4],
      ['\u{1F600}', [idAt(4)], 5],
      ['None', [idAt(5)], 6],
    ]);
    expect(body.totals.estimated_hours).toBe(21);
  });

  it('lists an empty project with zero totals, and no groups', async () => {
    const project = await createProject(h.api);
    const body: ListBody = (await h.api.get(`/api/project-finance/project/${project.id}/tasks?group_by=phase`).expect(200)).body.body;
    expect(body.tasks).toEqual([]);
    expect(body.groups).toEqual([]);
    expect(body.totals).toEqual({ ...Object.fromEntries(SUM_FIELDS.map((field) => [field, 0])), has_missing_rates: false });
  });

  /** A project with two members on different rates (`dear` and `cheap`), both assigned to one task. */
  async function twoRateTask(names: { dear: string; cheap: string }, rates: { dear: number; cheap: number }, estimatedHours: number) {
    const project = await createProject(h.api);
    const cheapRole = await createJobRole(h.api);
    const dearRole = await createJobRole(h.api);
    await setRateCard(h.api, project.id, [{ job_role_id: cheapRole.id, hourly_rate: rates.cheap }, { job_role_id: dearRole.id, hourly_rate: rates.dear }]);
    const dear = await createMember(h.api, { name: names.dear });
    const cheap = await createMember(h.api, { name: names.cheap });
    await addToProject(h.api, project.id, dear.id, dearRole.id);
    await addToProject(h.api, project.id, cheap.id, cheapRole.id);
    const task = await createTask(h.api, project.id, { estimated_hours: estimatedHours, assignee_ids: [dear.id, cheap.id] });
    return { project, task, dear, cheap };
  }

  it('splits in code point order in the list as in the breakdown (U+FF21 before U+1F600)', async () => {
    const { project, task, dear: emoji, cheap: wide } = await twoRateTask({ dear: '\u{1F600} Ann', cheap: '\uFF21nn' }, { dear: 100, cheap: 50 }, 0.03);
    // 3 hundredths over two: the first by code point (U+FF21, at 50/h) gets 0.02 h = 1.00, the emoji 0.01 h = 1.00.
    // In UTF-16 order the emoji (0xD83D) would come first: 0.02 h x 100 = 2.00 + 0.01 x 50 = 0.50.
    const b = await breakdown(h.api, task.id);
    expect(b.members.map((m) => [m.team_member_id, m.estimated_hours, m.estimated_cost])).toEqual([
      [wide.id, 0.02, 1],
      [emoji.id, 0.01, 1],
    ]);
    const listed = (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.tasks[0];
    expect(listed.estimated_labor_cost).toBe(2);
    expect(listed.assignees.map((a: { team_member_id: string }) => a.team_member_id)).toEqual([wide.id, emoji.id]);
  });

  it('follows renames, which reorder the estimate split, in the stored figures', async () => {
    const { project, task, dear: first } = await twoRateTask({ dear: 'Aaron', cheap: 'Bea' }, { dear: 1000, cheap: 10 }, 0.01);
    const cost = async () => (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.tasks[0].estimated_labor_cost;
    // The single hundredth goes to the first by name: Aaron at 1000/h = 10.00.
    expect(await cost()).toBe(10);
    await h.api.patch(`/api/team-members/${first.id}`, { name: 'Zoe' }).expect(200);
    // Now Bea comes first: 0.01 h x 10 = 0.10.
    expect(await cost()).toBe(0.1);
    expect((await breakdown(h.api, task.id)).task.estimated_labor_cost).toBe(0.1);
  });

  it('rolls a moved subtask out of its old parent and into its new one, with or without other changes', async () => {
    const project = await createProject(h.api);
    const first = await createTask(h.api, project.id, { name: 'First', estimated_hours: 1, fixed_cost: 10 });
    const second = await createTask(h.api, project.id, { name: 'Second', estimated_hours: 2, fixed_cost: 20 });
    const moving = await createTask(h.api, project.id, { name: 'Moving', parent_task_id: first.id, estimated_hours: 4, fixed_cost: 40 });
    const rows = async () =>
      Object.fromEntries(
        ((await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.tasks as Row[]).map((r) => [
          r.name,
          [r.estimated_hours, r.fixed_cost, r.sub_tasks_count],
        ]),
      );
    expect(await rows()).toEqual({ First: [5, 50, 1], Second: [2, 20, 0] });
    // A move alone.
    await h.api.patch(`/api/tasks/${moving.id}`, { parent_task_id: second.id }).expect(200);
    expect(await rows()).toEqual({ First: [1, 10, 0], Second: [6, 60, 1] });
    // A move back together with a new estimate (which refreshes the task's labor figures too).
    await h.api.patch(`/api/tasks/${moving.id}`, { parent_task_id: first.id, estimated_hours: 8 }).expect(200);
    expect(await rows()).toEqual({ First: [9, 50, 1], Second: [2, 20, 0] });
  });

  it('keeps stored figures exact under parallel logs, assignee changes and rate changes on one task', async () => {
    const project = await createProject(h.api);
    const role = await createJobRole(h.api);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 37.5 }]);
    const people = [];
    for (let i = 0; i < 4; i++) {
      const member = await createMember(h.api, { name: `Parallel ${i}` });
      await addToProject(h.api, project.id, member.id, role.id);
      people.push(member.id);
    }
    const task = await createTask(h.api, project.id, { estimated_hours: 7, assignee_ids: people.slice(0, 2) });
    const writes = [
      ...people.flatMap((id) => [1, 2, 3].map((k) => h.api.post(`/api/tasks/${task.id}/time-logs`, { team_member_id: id, seconds: 600 * k }))),
      h.api.patch(`/api/tasks/${task.id}`, { assignee_ids: people.slice(1) }),
      h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: role.id, hourly_rate: 41.25 }] }),
    ];
    const statuses = (await Promise.all(writes)).map((r) => r.status);
    expect(statuses.every((status) => status === 200 || status === 201)).toBe(true);
    const b = await breakdown(h.api, task.id);
    // Every member logged 600 + 1200 + 1800 s = 1 h at 41.25; 7 h split over three: 2.34, 2.33, 2.33.
    expect(b.task).toMatchObject({ logged_hours: 4, actual_labor_cost: 165, estimated_labor_cost: 288.75 });
    const listed = (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.tasks[0];
    expect(summaryOf(listed)).toEqual(b.task);
  });

  it('answers 404 for an unknown project or parent and 400 for bad ids or query values', async () => {
    const missing = await h.api.get('/api/project-finance/project/3f1c1b8e-1111-4222-8333-944455556666/tasks').expect(404);
    expect(missing.body.error.code).toBe('PROJECT_NOT_FOUND');
    await h.api.get(`/api/project-finance/project/${projectId}/tasks?parent_task_id=3f1c1b8e-1111-4222-8333-944455556666`).expect(404);
    await h.api.get(`/api/project-finance/project/${projectId}/tasks?parent_task_id=${ids.old}`).expect(404);
    const badId = await h.api.get('/api/project-finance/project/nope/tasks').expect(400);
    expect(badId.body.error.code).toBe('INVALID_ID');
    for (const query of ['?billable_filter=yes', '?group_by=owner', '?parent_task_id=zzz', '?page=2', '?group_by=status&group_by=phase']) {
      const res = await h.api.get(`/api/project-finance/project/${projectId}/tasks${query}`).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});
