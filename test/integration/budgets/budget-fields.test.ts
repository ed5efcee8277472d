import { Api, Harness, startHarness } from '../../support/harness';
import { createProject } from '../../support/fixtures';

/*
 * The budget fields of a project (docs/api.md "Budgets") and the budget route's query: bad input
 * is a 400 naming the field, with nothing changed; any role reads a budget, a viewer cannot set one.
 */
let h: Harness;
let viewer: Api;
let editor: Api;
beforeAll(async () => {
  h = await startHarness();
  const make = async (role: string) => (await h.api.post('/api/tokens', { name: `${role} token`, role }).expect(201)).body.body.token as string;
  viewer = h.api.as(await make('viewer'));
  editor = h.api.as(await make('editor'));
});
afterAll(() => h.close());

it('shows the defaults, and sets, shows and clears the budget fields', async () => {
  const project = await createProject(h.api, { budget: 500 });
  expect((await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body).toMatchObject({
    budget: 500,
    hours_budget: null,
    budget_period: 'total',
    budget_alerts: [80, 100],
  });
  const set = await editor.patch(`/api/projects/${project.id}`, { hours_budget: 120.5, budget_period: 'month', budget_alerts: [100, 25, 1000, 1] }).expect(200);
  expect(set.body.body).toMatchObject({ budget: 500, hours_budget: 120.5, budget_period: 'month', budget_alerts: [1, 25, 100, 1000] });
  expect((await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body).toMatchObject({ hours_budget: 120.5, budget_period: 'month', budget_alerts: [1, 25, 100, 1000] });
  const cleared = await h.api.patch(`/api/projects/${project.id}`, { hours_budget: null, budget_period: 'total', budget_alerts: [] }).expect(200);
  expect(cleared.body.body).toMatchObject({ hours_budget: null, budget_period: 'total', budget_alerts: [] });
  const listed = (await h.api.get('/api/projects?limit=100').expect(200)).body.body as { id: string }[];
  expect(listed.find((p) => p.id === project.id)).toMatchObject({ budget_alerts: [] });
});

it('refuses bad budget fields with a 400 naming the field, and changes nothing', async () => {
  const project = await createProject(h.api, { budget: 500 });
  await h.api.patch(`/api/projects/${project.id}`, { hours_budget: 10, budget_alerts: [50] }).expect(200);
  const before = (await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body;
  const cases: [Record<string, unknown>, string][] = [
    [{ budget_alerts: [0] }, 'budget_alerts'],
    [{ budget_alerts: [50, 1001] }, 'budget_alerts'],
    [{ budget_alerts: [80, 80] }, 'budget_alerts'],
    [{ budget_alerts: [50.5] }, 'budget_alerts'],
    [{ budget_alerts: ['80'] }, 'budget_alerts'],
    [{ budget_alerts: 80 }, 'budget_alerts'],
    [{ hours_budget: -1 }, 'hours_budget'],
    [{ hours_budget: 1.234 }, 'hours_budget'],
    [{ budget_period: 'week' }, 'budget_period'],
    // One bad field refuses the whole body: the good name is not written either.
    [{ name: 'Renamed', budget_alerts: [5, 5] }, 'budget_alerts'],
  ];
  for (const [body, path] of cases) {
    const res = await h.api.patch(`/api/projects/${project.id}`, body).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
    expect(res.body.error.message).toContain(path);
  }
  expect((await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body).toEqual(before);
});

it('refuses a month that is not YYYY-MM with a 400 naming month', async () => {
  const project = await createProject(h.api, { budget: 500 });
  for (const month of ['2026-13', '2026-1', '2026-00', '202611', '2026-11-01', 'november']) {
    const res = await h.api.get(`/api/projects/${project.id}/budget?month=${month}`).expect(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain('month');
  }
  await h.api.get(`/api/projects/${project.id}/budget?monthh=2026-11`).expect(400);
  await h.api.get('/api/projects/00000000-0000-4000-8000-00000000beef/budget').expect(404);
});

it('lets any role read a budget, and only an editor or admin set one', async () => {
  const project = await createProject(h.api, { budget: 500 });
  expect((await viewer.get(`/api/projects/${project.id}/budget`).expect(200)).body.body).toEqual({
    project_id: project.id,
    currency: 'USD',
    period: { kind: 'total', from: null, to: null },
    money: { budget: 500, spent: 0, remaining: 500, percent_used: 0 },
    hours: { budget: null, spent: 0, remaining: null, percent_used: null },
    alerts: [
      { kind: 'money', percent: 80, crossed: false, crossed_at: null },
      { kind: 'money', percent: 100, crossed: false, crossed_at: null },
    ],
  });
  await viewer.patch(`/api/projects/${project.id}`, { budget_alerts: [10] }).expect(403);
  await viewer.patch(`/api/projects/${project.id}`, { hours_budget: 1 }).expect(403);
  expect((await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body).toMatchObject({ hours_budget: null, budget_alerts: [80, 100] });
  await editor.patch(`/api/projects/${project.id}`, { budget_alerts: [10] }).expect(200);
});
