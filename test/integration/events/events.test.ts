import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { Api, Harness, startHarness } from '../../support/harness';
import { itOnPostgres } from '../../support/backend';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

type Event = { id: string; seq: number; type: string; occurred_at: string; data: Record<string, unknown> };

/** Every event of the team after `after`, read page by page. */
async function feed(api: Api, after = 0, query = ''): Promise<Event[]> {
  const all: Event[] = [];
  let cursor = after;
  for (;;) {
    const res = await api.get(`/api/events?after=${cursor}&limit=1000${query}`).expect(200);
    const page = res.body.body as { events: Event[]; next_after: number };
    all.push(...page.events);
    if (page.events.length === 0) return all;
    cursor = page.next_after;
  }
}

async function lastSeq(api: Api): Promise<number> {
  const events = await feed(api);
  return events.at(-1)?.seq ?? 0;
}

describe('the event feed', () => {
  it('records each write as its event, in seq order, with what changed', async () => {
    const start = await lastSeq(h.api);
    const role = await createJobRole(h.api);
    const project = await createProject(h.api, { budget: 1000 });
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 80 }]);
    const member = await createMember(h.api, { name: 'Feed member' });
    await addToProject(h.api, project.id, member.id, role.id);
    const task = await createTask(h.api, project.id, { estimated_hours: 10, assignee_ids: [member.id] });
    await h.api.patch(`/api/tasks/${task.id}`, { name: 'Renamed' }).expect(200);
    await h.api.patch(`/api/tasks/${task.id}`, { estimated_hours: 12.5, billable: false }).expect(200);
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 99.99 }).expect(200);
    const log = await logTime(h.api, task.id, member.id, { seconds: 5400, logged_at: '2026-11-20T09:30:00Z' });
    await h.api.delete(`/api/time-logs/${log.id}`).expect(200);
    await h.api.patch(`/api/projects/${project.id}`, { budget: 2000 }).expect(200);
    const child = await createTask(h.api, project.id, { parent_task_id: task.id });
    await h.api.delete(`/api/tasks/${task.id}`).expect(200);

    const events = await feed(h.api, start);
    expect(events.map((e) => e.type)).toEqual([
      'project.changed',
      'rate_card.changed',
      'member_role.changed',
      'task.changed',
      // the rename is no finance change: no event
      'task.changed',
      'task.fixed_cost.changed',
      'time_log.created',
      'time_log.deleted',
      'project.changed',
      'task.changed',
      'task.changed',
    ]);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const [created, card, joined, newTask, changed, fixed, logged, deleted, budget, newChild, archived] = events;
    expect(created?.data).toEqual({
      project_id: project.id,
      action: 'created',
      changed: ['name', 'currency', 'budget', 'time_zone', 'rate_unit', 'hours_per_day', 'hours_budget', 'budget_period', 'budget_alerts'],
      project: { name: project.name, currency: 'USD', budget: 1000, time_zone: 'UTC', rate_unit: 'hour', hours_per_day: 8, hours_budget: null, budget_period: 'total', budget_alerts: [80, 100] },
    });
    expect(card?.data).toEqual({ project_id: project.id, effective_from: '1970-01-01', roles: [{ job_role_id: role.id, hourly_rate: 80, bill_rate: null }], changed_job_role_ids: [role.id] });
    expect(joined?.data).toEqual({ project_id: project.id, team_member_id: member.id, job_role_id: role.id, effective_from: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), added: true });
    expect(newTask?.data).toEqual({
      task_id: task.id,
      project_id: project.id,
      action: 'created',
      changed: ['estimated_hours', 'billable', 'parent_task_id', 'assignee_ids'],
      task: { estimated_hours: 10, billable: true, parent_task_id: null, assignee_ids: [member.id] },
    });
    expect(changed?.data).toMatchObject({ action: 'updated', changed: ['estimated_hours', 'billable'], task: { estimated_hours: 12.5, billable: false } });
    expect(fixed?.data).toMatchObject({ task_id: task.id, project_id: project.id, old_value: 0, new_value: 99.99 });
    expect(logged?.data).toEqual({ time_log_id: log.id, project_id: project.id, task_id: task.id, team_member_id: member.id, seconds: 5400, logged_at: '2026-11-20T09:30:00.000Z' });
    expect(deleted?.data).toMatchObject({ time_log_id: log.id, seconds: 5400 });
    expect(budget?.data).toMatchObject({ action: 'updated', changed: ['budget'], project: { budget: 2000 } });
    expect(newChild?.data).toMatchObject({ task_id: child.id, action: 'created', task: { parent_task_id: task.id } });
    expect(archived?.data).toEqual({ task_id: task.id, project_id: project.id, action: 'archived', changed: ['archived'], archived_tasks: 2 });
    for (const event of events) {
      expect(event.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number.isNaN(Date.parse(event.occurred_at))).toBe(false);
    }
  });

  it('records a member removed from a project, and no event for a write that fails', async () => {
    const role = await createJobRole(h.api);
    const project = await createProject(h.api);
    const member = await createMember(h.api, { name: 'Leaving' });
    await addToProject(h.api, project.id, member.id, role.id);
    const task = await createTask(h.api, project.id, { assignee_ids: [member.id] });
    const before = await lastSeq(h.api);

    // 409: still assigned; 412: stale If-Match; 400: bad input; 404: unknown task.
    await h.api.delete(`/api/projects/${project.id}/members/${member.id}`).expect(409);
    await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: 5 }).set('If-Match', '"999"').expect(412);
    await h.api.patch(`/api/tasks/${task.id}`, { estimated_hours: -1 }).expect(400);
    await h.api.patch(`/api/tasks/${task.id}`, { parent_task_id: task.id }).expect(400);
    await h.api.post(`/api/tasks/${task.id}/time-logs`, { team_member_id: '3f1c1b8e-1111-4222-8333-944455556666', seconds: 60 }).expect(400);
    await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: '3f1c1b8e-1111-4222-8333-944455556666', hourly_rate: 1 }] }).expect(400);
    await h.api.patch(`/api/projects/${project.id}`, { time_zone: 'Mars/Olympus' }).expect(400);
    expect(await feed(h.api, before)).toEqual([]);

    await h.api.patch(`/api/tasks/${task.id}`, { assignee_ids: [] }).expect(200);
    await h.api.delete(`/api/projects/${project.id}/members/${member.id}`).expect(200);
    const events = await feed(h.api, before);
    expect(events.map((e) => [e.type, e.data.action ?? e.data.removed])).toEqual([
      ['task.changed', 'updated'],
      ['member_role.changed', true],
    ]);
    expect(events[1]?.data).toEqual({ project_id: project.id, team_member_id: member.id, removed: true });
  });

  it('pages with after and limit, filters by type, and answers next_after', async () => {
    const project = await createProject(h.api);
    const start = await lastSeq(h.api);
    for (const budget of [1, 2, 3, 4, 5]) await h.api.patch(`/api/projects/${project.id}`, { budget }).expect(200);
    await createTask(h.api, project.id);

    const first = (await h.api.get(`/api/events?after=${start}&limit=2`).expect(200)).body.body;
    expect(first.events.map((e: Event) => e.data.project)).toEqual([
      { name: project.name, currency: 'USD', budget: 1, time_zone: 'UTC', rate_unit: 'hour', hours_per_day: 8, hours_budget: null, budget_period: 'total', budget_alerts: [80, 100] },
      expect.objectContaining({ budget: 2 }),
    ]);
    expect(first.next_after).toBe(first.events[1].seq);
    const second = (await h.api.get(`/api/events?after=${first.next_after}&limit=3`).expect(200)).body.body;
    expect(second.events.map((e: Event) => (e.data.project as { budget: number }).budget)).toEqual([3, 4, 5]);
    const third = (await h.api.get(`/api/events?after=${second.next_after}`).expect(200)).body.body;
    expect(third.events.map((e: Event) => e.type)).toEqual(['task.changed']);
    const empty = (await h.api.get(`/api/events?after=${third.next_after}`).expect(200)).body.body;
    expect(empty).toEqual({ events: [], next_after: third.next_after });

    const tasks = (await h.api.get(`/api/events?after=${start}&type=task.changed`).expect(200)).body.body;
    expect(tasks.events.map((e: Event) => e.type)).toEqual(['task.changed']);
    // Without after: from the beginning, 100 at most.
    const fromStart = (await h.api.get('/api/events').expect(200)).body.body;
    expect(fromStart.events.length).toBe(Math.min(100, third.next_after));
    expect(fromStart.events[0].seq).toBe(1);
  });

  it('refuses bad after, limit and type with 400 naming the field', async () => {
    for (const [query, field] of [
      ['after=-1', 'after'],
      ['after=abc', 'after'],
      ['after=1.5', 'after'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=ten', 'limit'],
      ['type=task.exploded', 'type'],
      ['colour=red', 'colour'],
    ]) {
      const res = await h.api.get(`/api/events?${query}`).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    }
  });

  it('shows a team only its own events, to any role', async () => {
    const other = await createTeamWithAdmin(h.db, `other team ${Date.now()}`);
    const otherApi = h.api.as(other.token);
    const start = await lastSeq(otherApi);
    await createProject(h.api);
    expect(await feed(otherApi, start)).toEqual([]);
    const theirs = await createProject(otherApi);
    const seen = await feed(otherApi, start);
    expect(seen.map((e) => e.data.project_id)).toEqual([theirs.id]);
    const mine = await feed(h.api);
    expect(mine.some((e) => e.data.project_id === theirs.id)).toBe(false);

    const viewer = (await h.api.post('/api/tokens', { name: 'feed viewer', role: 'viewer' }).expect(201)).body.body.token;
    await h.api.as(viewer).get('/api/events').expect(200);
  });
});

describe('the feed under concurrent writes (PostgreSQL server)', () => {
  itOnPostgres('PGlite runs one transaction at a time, so a write held open would hold the reader too')('never skips an event that commits after a later one was read', async () => {
    const { recordEvent } = await import('../../../src/events/events.repository');
    const start = await lastSeq(h.api);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let recorded: () => void = () => {};
    const inserted = new Promise<void>((resolve) => (recorded = resolve));
    // A write that records its event first and commits last.
    const slow = h.db.transaction(async (trx) => {
      await recordEvent(trx, h.teamId, 'project.changed', { project_id: 'slow' });
      recorded();
      await held;
    });
    await inserted;
    const project = await createProject(h.api);
    const first = (await h.api.get(`/api/events?after=${start}`).expect(200)).body.body;
    expect(first.events.map((e: Event) => e.data.project_id)).toEqual([project.id]);
    release();
    await slow;
    const second = (await h.api.get(`/api/events?after=${first.next_after}`).expect(200)).body.body;
    expect(second.events.map((e: Event) => e.data.project_id)).toEqual(['slow']);
    expect(second.events[0].seq).toBeGreaterThan(first.next_after);
  });
});
