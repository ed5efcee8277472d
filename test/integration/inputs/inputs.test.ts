import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, unique } from '../../support/fixtures';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const UNKNOWN = '3f1c1b8e-1111-4222-8333-944455556666';

/** Expects a 400 VALIDATION_ERROR whose details name `path`. */
async function expectInvalid(req: Promise<{ status: number; body: { success: boolean; error: { code: string; details?: { path: string }[] } } }>, path: string) {
  const res = await req;
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  expect(res.body.success).toBe(false);
  expect(res.body.error.details?.map((d) => d.path)).toContain(path);
}

describe('job roles', () => {
  it('creates, lists, and refuses duplicates (409), blanks, reserved and unknown fields (400)', async () => {
    const name = unique('Architect');
    const created = await h.api.post('/api/job-roles', { name }).expect(201);
    expect(created.body.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name, created_at: expect.any(String) });
    const listed = (await h.api.get('/api/job-roles').expect(200)).body.body;
    expect(listed.map((r: { name: string }) => r.name)).toContain(name);
    const dup = await h.api.post('/api/job-roles', { name: name.toUpperCase() }).expect(409);
    expect(dup.body.error.code).toBe('DUPLICATE_NAME');
    await expectInvalid(h.api.post('/api/job-roles', { name: '   ' }), 'name');
    await expectInvalid(h.api.post('/api/job-roles', { name: 42 }), 'name');
    await expectInvalid(h.api.post('/api/job-roles', {}), 'name');
    await expectInvalid(h.api.post('/api/job-roles', { name: 'unassigned' }), 'name');
    await expectInvalid(h.api.post('/api/job-roles', { name: 'x', colour: 'red' }), 'colour');
    await expectInvalid(h.api.post('/api/job-roles', { name: 'bad\u0007name' }), 'name');
    await expectInvalid(h.api.post('/api/job-roles', { name: 'x'.repeat(101) }), 'name');
  });
});

describe('team members', () => {
  it('creates, reads, patches, and validates every field', async () => {
    const created = await h.api.post('/api/team-members', { name: 'Mia', email: `mia.${Date.now()}@example.com`, avatar_url: 'https://img.example.com/m.png' }).expect(201);
    const id = created.body.body.id;
    expect((await h.api.get(`/api/team-members/${id}`).expect(200)).body.body).toMatchObject({ name: 'Mia', avatar_url: 'https://img.example.com/m.png' });
    const patched = await h.api.patch(`/api/team-members/${id}`, { name: 'Mia R.', avatar_url: null }).expect(200);
    expect(patched.body.body).toMatchObject({ id, name: 'Mia R.', avatar_url: null });
    await expectInvalid(h.api.post('/api/team-members', { name: 'A', email: 'not-an-email' }), 'email');
    await expectInvalid(h.api.post('/api/team-members', { name: 'A', avatar_url: 'javascript:alert(1)' }), 'avatar_url');
    await expectInvalid(h.api.post('/api/team-members', { name: 'A', role: 'x' }), 'role');
    await expectInvalid(h.api.patch(`/api/team-members/${id}`, { name: null }), 'name');
    await h.api.post('/api/team-members', { name: 'Twin', email: created.body.body.email.toUpperCase() }).expect(409);
    expect((await h.api.get('/api/team-members/nope').expect(400)).body.error.code).toBe('INVALID_ID');
    expect((await h.api.get(`/api/team-members/${UNKNOWN}`).expect(404)).body.error.code).toBe('TEAM_MEMBER_NOT_FOUND');
    await h.api.patch(`/api/team-members/${UNKNOWN}`, { name: 'x' }).expect(404);
  });
});

describe('projects, rate cards and project members', () => {
  it('creates projects with USD by default and validates currency and budget', async () => {
    const plain = await h.api.post('/api/projects', { name: unique('P') }).expect(201);
    expect(plain.body.body).toMatchObject({ currency: 'USD', budget: null });
    const yen = await h.api.post('/api/projects', { name: unique('P'), currency: 'JPY', budget: 1500000 }).expect(201);
    expect(yen.body.body).toMatchObject({ currency: 'JPY', budget: 1500000 });
    await expectInvalid(h.api.post('/api/projects', { name: unique('P'), currency: 'usd' }), 'currency');
    await expectInvalid(h.api.post('/api/projects', { name: unique('P'), currency: 'ABC' }), 'currency');
    await expectInvalid(h.api.post('/api/projects', { name: unique('P'), currency: 'JPY', budget: 10.5 }), 'budget');
    await expectInvalid(h.api.post('/api/projects', { name: unique('P'), budget: -1 }), 'budget');
    await expectInvalid(h.api.post('/api/projects', { name: unique('P'), budget: '100' }), 'budget');
    await h.api.post('/api/projects', { name: plain.body.body.name }).expect(409);
    const patched = await h.api.patch(`/api/projects/${plain.body.body.id}`, { budget: 99.99, currency: 'EUR' }).expect(200);
    expect(patched.body.body).toMatchObject({ budget: 99.99, currency: 'EUR' });
    expect((await h.api.get(`/api/projects/${UNKNOWN}`).expect(404)).body.error.code).toBe('PROJECT_NOT_FOUND');
    await h.api.get('/api/projects/12').expect(400);
  });

  it('lists the team projects by name (docs/api.md)', async () => {
    const stem = unique('Order');
    const made: string[] = [];
    for (const suffix of ['c', 'a', 'd', 'b']) made.push((await h.api.post('/api/projects', { name: `${stem} ${suffix}` }).expect(201)).body.body.id);
    const listed = (await h.api.get('/api/projects').expect(200)).body.body as { id: string; name: string }[];
    const ours = listed.filter((project) => project.name.startsWith(stem)).map((project) => project.id);
    expect(ours).toEqual([made[1], made[3], made[0], made[2]]);
  });

  it('refuses a currency change that would strand finer amounts (409)', async () => {
    const project = await createProject(h.api);
    await createTask(h.api, project.id, { fixed_cost: 10.5 });
    const res = await h.api.patch(`/api/projects/${project.id}`, { currency: 'JPY' }).expect(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect((await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body.currency).toBe('USD');
  });

  it('replaces the rate card and validates it', async () => {
    const project = await createProject(h.api);
    const a = await createJobRole(h.api);
    const b = await createJobRole(h.api);
    const day = '2026-06-01';
    await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: a.id, hourly_rate: 10 }, { job_role_id: b.id, hourly_rate: 20.5 }], effective_from: day }).expect(200);
    // A second card from the same day replaces the first: role a has no rate from that day on.
    const replaced = await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: b.id, hourly_rate: 30 }], effective_from: day }).expect(200);
    expect(replaced.body.body).toEqual({
      project_id: project.id,
      currency: 'USD',
      date: day,
      roles: [{ job_role_id: b.id, job_role_name: b.name, hourly_rate: 30, bill_rate: null, effective_from: day }],
    });
    expect((await h.api.get(`/api/projects/${project.id}/rate-card?date=${day}`).expect(200)).body.body).toEqual(replaced.body.body);
    const url = `/api/projects/${project.id}/rate-card`;
    await expectInvalid(h.api.put(url, { roles: [{ job_role_id: a.id, hourly_rate: 1.234 }] }), 'roles.0.hourly_rate');
    await expectInvalid(h.api.put(url, { roles: [{ job_role_id: a.id, hourly_rate: -5 }] }), 'roles.0.hourly_rate');
    await expectInvalid(h.api.put(url, { roles: [{ job_role_id: a.id, hourly_rate: '5' }] }), 'roles.0.hourly_rate');
    await expectInvalid(h.api.put(url, { roles: [{ job_role_id: a.id, hourly_rate: 1 }, { job_role_id: a.id, hourly_rate: 2 }] }), 'roles.1.job_role_id');
    await expectInvalid(h.api.put(url, { roles: [{ job_role_id: UNKNOWN, hourly_rate: 1 }] }), 'roles.0.job_role_id');
    await expectInvalid(h.api.put(url, { roles: [{ job_role_id: 'x', hourly_rate: 1 }] }), 'roles.0.job_role_id');
    await expectInvalid(h.api.put(url, {}), 'roles');
    await expectInvalid(h.api.put(url, { roles: [], effective_from: '2026-02-30' }), 'effective_from');
    await expectInvalid(h.api.put(url, { roles: [], effective_from: '1969-12-31' }), 'effective_from');
    await expectInvalid(h.api.get(`${url}?date=tomorrow`), 'date');
    expect((await h.api.get(`${url}?date=${day}`).expect(200)).body.body).toEqual(replaced.body.body);
    await h.api.put(`/api/projects/${UNKNOWN}/rate-card`, { roles: [] }).expect(404);
  });

  it('adds members (201), changes their role (200), and refuses removing an assigned member (409)', async () => {
    const project = await createProject(h.api);
    const role = await createJobRole(h.api);
    const member = await createMember(h.api, { name: 'Noor' });
    const url = `/api/projects/${project.id}/members/${member.id}`;
    const added = await h.api.put(url, { job_role_id: null }).expect(201);
    expect(added.body.body).toMatchObject({ project_id: project.id, team_member_id: member.id, job_role_id: null });
    expect((await h.api.put(url, { job_role_id: role.id }).expect(200)).body.body).toMatchObject({ job_role_id: role.id, job_role_name: role.name });
    await expectInvalid(h.api.put(url, { job_role_id: UNKNOWN }), 'job_role_id');
    await expectInvalid(h.api.put(url, {}), 'job_role_id');
    await h.api.put(`/api/projects/${project.id}/members/${UNKNOWN}`, { job_role_id: null }).expect(404);
    const task = await createTask(h.api, project.id, { assignee_ids: [member.id] });
    expect((await h.api.delete(url).expect(409)).body.error.code).toBe('CONFLICT');
    await h.api.patch(`/api/tasks/${task.id}`, { assignee_ids: [] }).expect(200);
    await h.api.delete(url).expect(200);
    await h.api.delete(url).expect(404);
    expect((await h.api.get(`/api/projects/${project.id}/members`).expect(200)).body.body).toEqual([]);
  });
});

describe('tasks', () => {
  it('creates with defaults, reads, patches and archives', async () => {
    const project = await createProject(h.api);
    const created = await h.api.post(`/api/projects/${project.id}/tasks`, { name: 'Plain' }).expect(201);
    expect(created.body.body).toMatchObject({ name: 'Plain', estimated_hours: 0, billable: true, fixed_cost: 0, parent_task_id: null, assignee_ids: [], status: null, finance_version: 1 });
    const id = created.body.body.id;
    const patched = await h.api.patch(`/api/tasks/${id}`, { estimated_hours: 12.5, billable: false, status: 'doing', phase: 'Build' }).expect(200);
    expect(patched.body.body).toMatchObject({ estimated_hours: 12.5, billable: false, status: 'doing', phase: 'Build' });
    const archived = await h.api.delete(`/api/tasks/${id}`).expect(200);
    expect(archived.body.body).toMatchObject({ id, archived: true });
    await h.api.get(`/api/tasks/${id}`).expect(404);
    await h.api.patch(`/api/tasks/${id}`, { name: 'x' }).expect(404);
    await h.api.delete(`/api/tasks/${id}`).expect(404);
  });

  it('validates estimates, fixed costs, assignees and parents', async () => {
    const project = await createProject(h.api);
    const other = await createProject(h.api);
    const inProject = await createMember(h.api, { name: 'In' });
    const outsider = await createMember(h.api, { name: 'Out' });
    await addToProject(h.api, project.id, inProject.id, null);
    const url = `/api/projects/${project.id}/tasks`;
    await expectInvalid(h.api.post(url, { name: 'T', estimated_hours: 1.005 }), 'estimated_hours');
    await expectInvalid(h.api.post(url, { name: 'T', estimated_hours: -1 }), 'estimated_hours');
    await expectInvalid(h.api.post(url, { name: 'T', estimated_hours: '3' }), 'estimated_hours');
    await expectInvalid(h.api.post(url, { name: 'T', fixed_cost: 0.001 }), 'fixed_cost');
    await expectInvalid(h.api.post(url, { name: 'T', assignee_ids: [outsider.id] }), 'assignee_ids.0');
    await expectInvalid(h.api.post(url, { name: 'T', assignee_ids: [inProject.id, inProject.id] }), 'assignee_ids');
    await expectInvalid(h.api.post(url, { name: 'T', assignee_ids: ['nope'] }), 'assignee_ids.0');
    await expectInvalid(h.api.post(url, { name: 'T', billable: 'yes' }), 'billable');
    await expectInvalid(h.api.post(url, { name: 'T', estimate: 3 }), 'estimate');
    const foreignParent = await createTask(h.api, other.id);
    await expectInvalid(h.api.post(url, { name: 'T', parent_task_id: foreignParent.id }), 'parent_task_id');
    await expectInvalid(h.api.post(url, { name: 'T', parent_task_id: UNKNOWN }), 'parent_task_id');
    await h.api.post(`/api/projects/${UNKNOWN}/tasks`, { name: 'T' }).expect(404);
    const tasks = (await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body.tasks;
    expect(tasks).toEqual([]);
  });

  it('never lets a task become its own ancestor', async () => {
    const project = await createProject(h.api);
    const a = await createTask(h.api, project.id);
    const b = await createTask(h.api, project.id, { parent_task_id: a.id });
    const c = await createTask(h.api, project.id, { parent_task_id: b.id });
    await expectInvalid(h.api.patch(`/api/tasks/${a.id}`, { parent_task_id: a.id }), 'parent_task_id');
    await expectInvalid(h.api.patch(`/api/tasks/${a.id}`, { parent_task_id: c.id }), 'parent_task_id');
    await h.api.patch(`/api/tasks/${c.id}`, { parent_task_id: a.id }).expect(200);
    await h.api.patch(`/api/tasks/${c.id}`, { parent_task_id: null }).expect(200);
    expect((await h.api.get(`/api/tasks/${c.id}`).expect(200)).body.body.parent_task_id).toBeNull();
  });

  it('archives a task together with its descendants', async () => {
    const project = await createProject(h.api);
    const a = await createTask(h.api, project.id);
    const b = await createTask(h.api, project.id, { parent_task_id: a.id });
    const c = await createTask(h.api, project.id, { parent_task_id: b.id });
    expect((await h.api.delete(`/api/tasks/${a.id}`).expect(200)).body.body.archived_tasks).toBe(3);
    await h.api.get(`/api/tasks/${c.id}`).expect(404);
  });
});

describe('time logs', () => {
  it('logs hours or seconds, lists and deletes them, and validates', async () => {
    const project = await createProject(h.api);
    const member = await createMember(h.api, { name: 'Logger' });
    const task = await createTask(h.api, project.id);
    const url = `/api/tasks/${task.id}/time-logs`;
    const byHours = await h.api.post(url, { team_member_id: member.id, hours: 1.25, logged_at: '2026-11-20T09:30:00+01:00', note: 'line one\nline two' }).expect(201);
    expect(byHours.body.body).toMatchObject({ task_id: task.id, team_member_id: member.id, seconds: 4500, hours: 1.25, logged_at: '2026-11-20T08:30:00.000Z', note: 'line one\nline two' });
    // 0.14125 h is exactly 508.5 s: half up to 509 (binary floating point would give 508).
    expect((await h.api.post(url, { team_member_id: member.id, hours: 0.14125 }).expect(201)).body.body.seconds).toBe(509);
    const bySeconds = await h.api.post(url, { team_member_id: member.id, seconds: 90 }).expect(201);
    expect(bySeconds.body.body).toMatchObject({ seconds: 90, hours: 0.03 });
    expect((await h.api.get(url).expect(200)).body.body).toHaveLength(3);
    await expectInvalid(h.api.post(url, { team_member_id: member.id }), 'hours');
    await expectInvalid(h.api.post(url, { team_member_id: member.id, hours: 1, seconds: 3600 }), 'hours');
    await expectInvalid(h.api.post(url, { team_member_id: member.id, hours: 0 }), 'hours');
    await expectInvalid(h.api.post(url, { team_member_id: member.id, seconds: 1.5 }), 'seconds');
    await expectInvalid(h.api.post(url, { team_member_id: member.id, seconds: -60 }), 'seconds');
    await expectInvalid(h.api.post(url, { team_member_id: member.id, seconds: '60' }), 'seconds');
    await expectInvalid(h.api.post(url, { team_member_id: member.id, seconds: 60, logged_at: 'yesterday' }), 'logged_at');
    await expectInvalid(h.api.post(url, { team_member_id: member.id, seconds: 60, logged_at: '2026-11-20T09:30:00' }), 'logged_at');
    await expectInvalid(h.api.post(url, { team_member_id: UNKNOWN, seconds: 60 }), 'team_member_id');
    await h.api.post(`/api/tasks/${UNKNOWN}/time-logs`, { team_member_id: member.id, seconds: 60 }).expect(404);
    // An unknown task answers 404 before the member is looked at; refused logs write nothing.
    await h.api.post(`/api/tasks/${UNKNOWN}/time-logs`, { team_member_id: UNKNOWN, seconds: 60 }).expect(404);
    expect((await h.api.get(url).expect(200)).body.body).toHaveLength(3);
    // No logging on an archived task.
    const archived = await createTask(h.api, project.id);
    await h.api.post(`/api/tasks/${archived.id}/time-logs`, { team_member_id: member.id, seconds: 60 }).expect(201);
    await h.api.delete(`/api/tasks/${archived.id}`).expect(200);
    expect((await h.api.post(`/api/tasks/${archived.id}/time-logs`, { team_member_id: member.id, seconds: 60 }).expect(404)).body.error.code).toBe('TASK_NOT_FOUND');
    await h.api.delete(`/api/time-logs/${bySeconds.body.body.id}`).expect(200);
    expect((await h.api.delete(`/api/time-logs/${bySeconds.body.body.id}`).expect(404)).body.error.code).toBe('TIME_LOG_NOT_FOUND');
    await h.api.delete('/api/time-logs/abc').expect(400);
    expect((await h.api.get(url).expect(200)).body.body).toHaveLength(2);
  });
});
