import { Harness, startHarness } from '../../support/harness';
import { addToProject, breakdown, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';

let h: Harness;
let projectId: string;

beforeAll(async () => {
  h = await startHarness();
  projectId = (await createProject(h.api)).id;
});
afterAll(() => h.close());

const put = (taskId: string, body: unknown, ifMatch?: string) => {
  const req = h.api.put(`/api/project-finance/task/${taskId}/fixed-cost`);
  if (ifMatch) req.set('If-Match', ifMatch);
  return req.send(body as object);
};

async function stored(taskId: string) {
  return (await h.api.get(`/api/tasks/${taskId}`).expect(200)).body.body as { fixed_cost: number; finance_version: number };
}

describe('PUT /api/project-finance/task/:task_id/fixed-cost', () => {
  it('updates the fixed cost, answers the task summary with an ETag, and both totals follow', async () => {
    const task = await createTask(h.api, projectId, { estimated_hours: 2 });
    const res = await put(task.id, { fixed_cost: 1234.56 }).expect(200);
    expect(res.headers.etag).toBe('"2"');
    expect(res.body).toEqual({
      success: true,
      body: {
        id: task.id,
        name: task.name,
        project_id: projectId,
        billable: true,
        currency: 'USD',
        estimated_hours: 2,
        logged_hours: 0,
        estimated_labor_cost: 0,
        actual_labor_cost: 0,
        fixed_cost: 1234.56,
        total_estimated_cost: 1234.56,
        total_actual_cost: 1234.56,
        // No revenue: each margin is minus the total cost (R24); nobody takes part, so no rate is missing.
        estimated_revenue: 0,
        actual_revenue: 0,
        estimated_margin: -1234.56,
        actual_margin: -1234.56,
        has_missing_rates: false,
      },
    });
    expect((await breakdown(h.api, task.id)).task).toEqual(res.body.body);
  });

  it('refuses anything but a JSON number within bounds and the currency\'s decimals, changing nothing', async () => {
    const task = await createTask(h.api, projectId, { fixed_cost: 10 });
    const cases: [unknown, string][] = [
      [{ fixed_cost: '12.50' }, 'fixed_cost'],
      [{ fixed_cost: -1 }, 'fixed_cost'],
      [{ fixed_cost: 1.005 }, 'fixed_cost'],
      [{ fixed_cost: 1000000000.01 }, 'fixed_cost'],
      [{ fixed_cost: null }, 'fixed_cost'],
      [{ fixed_cost: [1] }, 'fixed_cost'],
      [{ fixed_cost: true }, 'fixed_cost'],
      [{}, 'fixed_cost'],
      [{ fixed_cost: 5, note: 'x' }, 'note'],
      [[{ fixed_cost: 5 }], '(body)'],
    ];
    for (const [body, path] of cases) {
      const res = await put(task.id, body).expect(400);
      expect(res.body.success).toBe(false);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const huge = await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`).set('Content-Type', 'application/json').send('{"fixed_cost": 1e999}').expect(400);
    expect(huge.body.error.code).toBe('VALIDATION_ERROR');
    const malformed = await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`).set('Content-Type', 'application/json').send('{"fixed_cost": 12,').expect(400);
    expect(malformed.body.error.code).toBe('MALFORMED_JSON');
    expect(await stored(task.id)).toMatchObject({ fixed_cost: 10, finance_version: 2 });
    expect((await h.api.get(`/api/project-finance/task/${task.id}/fixed-cost/history`).expect(200)).body.body).toHaveLength(1);
  });

  it('accepts the currency\'s own precision: whole yen, fils', async () => {
    const yen = await createProject(h.api, { currency: 'JPY' });
    const yenTask = await createTask(h.api, yen.id);
    await put(yenTask.id, { fixed_cost: 1500.5 }).expect(400);
    expect((await put(yenTask.id, { fixed_cost: 1500 }).expect(200)).body.body.fixed_cost).toBe(1500);
    const kwd = await createProject(h.api, { currency: 'KWD' });
    const kwdTask = await createTask(h.api, kwd.id);
    expect((await put(kwdTask.id, { fixed_cost: 0.125 }).expect(200)).body.body.fixed_cost).toBe(0.125);
    await put(kwdTask.id, { fixed_cost: 0.1255 }).expect(400);
  });

  it('answers 400 for a bad id and 404 for an unknown or archived task', async () => {
    expect((await put('abc', { fixed_cost: 1 }).expect(400)).body.error.code).toBe('INVALID_ID');
    expect((await put('3f1c1b8e-1111-4222-8333-944455556666', { fixed_cost: 1 }).expect(404)).body.error.code).toBe('TASK_NOT_FOUND');
    const task = await createTask(h.api, projectId);
    await h.api.delete(`/api/tasks/${task.id}`).expect(200);
    await put(task.id, { fixed_cost: 1 }).expect(404);
  });

  it('honours If-Match: the current version wins, a stale one gets 412 and changes nothing', async () => {
    const task = await createTask(h.api, projectId);
    const first = await put(task.id, { fixed_cost: 100 }, '"1"').expect(200);
    expect(first.headers.etag).toBe('"2"');
    const stale = await put(task.id, { fixed_cost: 200 }, '"1"').expect(412);
    expect(stale.body.error.code).toBe('PRECONDITION_FAILED');
    expect(await stored(task.id)).toMatchObject({ fixed_cost: 100, finance_version: 2 });
    await put(task.id, { fixed_cost: 300 }, first.headers.etag).expect(200);
    await put(task.id, { fixed_cost: 400 }, 'W/"3"').expect(200);
    await put(task.id, { fixed_cost: 500 }, '*').expect(200);
  });

  it('lets exactly one of many concurrent updates on the same version win, with one history entry', async () => {
    const task = await createTask(h.api, projectId);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => put(task.id, { fixed_cost: 10 + i }, '"1"')));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = results.find((r) => r.status === 200)?.body.body.fixed_cost;
    expect(await stored(task.id)).toMatchObject({ fixed_cost: winner, finance_version: 2 });
    const history = (await h.api.get(`/api/project-finance/task/${task.id}/fixed-cost/history`).expect(200)).body.body;
    expect(history).toEqual([expect.objectContaining({ old_value: 0, new_value: winner, finance_version: 2 })]);
  });

  it('loses nothing under parallel unconditional updates: one version and one history entry each', async () => {
    const task = await createTask(h.api, projectId);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => put(task.id, { fixed_cost: 100 + i })));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    const history = (await h.api.get(`/api/project-finance/task/${task.id}/fixed-cost/history`).expect(200)).body.body as { old_value: number; new_value: number; finance_version: number }[];
    expect(history.map((e) => e.finance_version)).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    expect(history.map((e) => e.new_value).sort()).toEqual(Array.from({ length: 10 }, (_, i) => 100 + i).sort());
    // Each change starts from the previous one's value: a chain with no gap.
    for (let i = 0; i < history.length - 1; i++) expect(history[i]?.old_value).toBe(history[i + 1]?.new_value);
    expect(await stored(task.id)).toMatchObject({ fixed_cost: history[0]?.new_value, finance_version: 11 });
  });

  it('records every change, from PUT and from PATCH, newest first, with who made it', async () => {
    const task = await createTask(h.api, projectId, { fixed_cost: 5 });
    await put(task.id, { fixed_cost: 7.5 }).expect(200);
    await h.api.patch(`/api/tasks/${task.id}`, { fixed_cost: 9.25 }).expect(200);
    await h.api.patch(`/api/tasks/${task.id}`, { name: 'renamed' }).expect(200);
    const history = (await h.api.get(`/api/project-finance/task/${task.id}/fixed-cost/history`).expect(200)).body.body;
    expect(history.map((e: { old_value: number; new_value: number; finance_version: number }) => [e.old_value, e.new_value, e.finance_version])).toEqual([
      [7.5, 9.25, 4],
      [5, 7.5, 3],
      [0, 5, 2],
    ]);
    for (const entry of history) {
      expect(entry.changed_by).toMatch(/admin/);
      expect(new Date(entry.changed_at).toISOString()).toBe(entry.changed_at);
    }
  });

  it('lets parent tasks carry a fixed cost that rolls up', async () => {
    const parent = await createTask(h.api, projectId);
    await createTask(h.api, projectId, { parent_task_id: parent.id, fixed_cost: 20 });
    await put(parent.id, { fixed_cost: 30 }).expect(200);
    expect((await breakdown(h.api, parent.id, true)).task).toMatchObject({ fixed_cost: 50, total_estimated_cost: 50 });
  });

  it('has the task\'s own stored totals recomputed by the calculator, not only its ancestors\' roll-ups', async () => {
    // 2 h at 40 = 80 estimated, 0.5 h logged = 20 actual; the fixed cost added to both totals.
    const role = await createJobRole(h.api);
    const ann = await createMember(h.api, { name: 'Ann' });
    const project = await createProject(h.api);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 40 }]);
    await addToProject(h.api, project.id, ann.id, role.id);
    const parent = await createTask(h.api, project.id, { fixed_cost: 3 });
    const task = await createTask(h.api, project.id, { estimated_hours: 2, assignee_ids: [ann.id], fixed_cost: 10, parent_task_id: parent.id });
    await logTime(h.api, task.id, ann.id, { seconds: 1800 });
    const list = `/api/project-finance/project/${project.id}/tasks`;
    const ownStored = async () => {
      await h.api.get(list).expect(200); // brings the stored figures current
      const row = await h.db('task_labor').where({ team_id: h.teamId, task_id: task.id }).first('total_estimated_cost', 'total_actual_cost', 'variance');
      return [row.total_estimated_cost, row.total_actual_cost, row.variance].map(Number);
    };
    expect(await ownStored()).toEqual([90, 30, 60]);

    await put(task.id, { fixed_cost: 12.5 }).expect(200);
    expect(await ownStored()).toEqual([92.5, 32.5, 60]);
    // Read back from the stored row, and summed into the parent's row.
    expect((await breakdown(h.api, task.id)).task).toMatchObject({ fixed_cost: 12.5, total_estimated_cost: 92.5, total_actual_cost: 32.5 });
    const rows = (await h.api.get(list).expect(200)).body.body.tasks;
    expect(rows).toEqual([expect.objectContaining({ id: parent.id, fixed_cost: 15.5, total_estimated_cost: 95.5, total_actual_cost: 35.5, variance: 60 })]);
  });
});
