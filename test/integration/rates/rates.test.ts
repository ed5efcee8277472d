import { setClock } from '../../../src/clock';
import { Api, Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, unique } from '../../support/fixtures';

/*
 * The rate inputs of docs/finance-rules.md R26 by hand: bill rates on the rate card, a member's own
 * rates (dated overrides) and their explanation, and a project's rate unit and day length. Today is
 * 2026-11-20 12:00 UTC (the service clock, set): 2026-11-21 in Pacific/Auckland (UTC+13).
 */
let h: Harness;
let viewer: Api;
let editor: Api;
beforeAll(async () => {
  setClock(new Date('2026-11-20T12:00:00Z'));
  h = await startHarness();
  const token = async (role: string) => (await h.api.post('/api/tokens', { name: `${role} of rates`, role }).expect(201)).body.body.token as string;
  viewer = h.api.as(await token('viewer'));
  editor = h.api.as(await token('editor'));
});
afterAll(async () => {
  setClock(undefined);
  await h.close();
});

const UNKNOWN = '00000000-0000-4000-8000-00000000beef';

type Failure = { status: number; body: { success: boolean; error: { code: string; details?: { path: string }[] } } };

async function expectInvalid(req: Promise<Failure>, path: string) {
  const res = await req;
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  expect(res.body.error.details?.map((d) => d.path)).toContain(path);
}

async function eventsOf(type: string): Promise<{ data: Record<string, unknown> }[]> {
  return (await h.api.get(`/api/events?type=${type}&limit=1000`).expect(200)).body.body.events;
}

const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);

describe('bill rates on the rate card', () => {
  it('are written, dated and answered like cost rates, on the card of a day and in its history', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api, unique('Dev'));
    const qa = await createJobRole(h.api, unique('QA'));
    const url = `/api/projects/${project.id}/rate-card`;
    // From the beginning: Dev costs 50 and bills 80; QA costs 40 and bills nothing (bill_rate left out).
    await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }, { job_role_id: qa.id, hourly_rate: 40 }], effective_from: '1970-01-01' }).expect(200);
    // From 2026-07-01: Dev bills 90.5; QA costs nothing and bills 60.
    const july = await h.api
      .put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 90.5 }, { job_role_id: qa.id, hourly_rate: null, bill_rate: 60 }], effective_from: '2026-07-01' })
      .expect(200);
    expect(july.body.body.roles).toEqual([
      { job_role_id: dev.id, job_role_name: dev.name, hourly_rate: 50, bill_rate: 90.5, effective_from: '2026-07-01' },
      { job_role_id: qa.id, job_role_name: qa.name, hourly_rate: null, bill_rate: 60, effective_from: '2026-07-01' },
    ]);
    expect((await h.api.get(`${url}?date=2026-06-30`).expect(200)).body.body.roles).toEqual([
      { job_role_id: dev.id, job_role_name: dev.name, hourly_rate: 50, bill_rate: 80, effective_from: '1970-01-01' },
      { job_role_id: qa.id, job_role_name: qa.name, hourly_rate: 40, bill_rate: null, effective_from: '1970-01-01' },
    ]);
    // Today (2026-11-20) the July card is in force.
    expect((await h.api.get(url).expect(200)).body.body).toEqual({ ...july.body.body, date: '2026-11-20' });
    const history = (await h.api.get(`${url}/history`).expect(200)).body.body;
    expect(history.entries.map((e: Record<string, unknown>) => ({ ...e, written_at: 'at', written_by: 'by' }))).toEqual([
      { job_role_id: dev.id, job_role_name: dev.name, hourly_rate: 50, bill_rate: 80, effective_from: '1970-01-01', written_at: 'at', written_by: 'by' },
      { job_role_id: qa.id, job_role_name: qa.name, hourly_rate: 40, bill_rate: null, effective_from: '1970-01-01', written_at: 'at', written_by: 'by' },
      { job_role_id: dev.id, job_role_name: dev.name, hourly_rate: 50, bill_rate: 90.5, effective_from: '2026-07-01', written_at: 'at', written_by: 'by' },
      { job_role_id: qa.id, job_role_name: qa.name, hourly_rate: null, bill_rate: 60, effective_from: '2026-07-01', written_at: 'at', written_by: 'by' },
    ]);
    expect(history.entries[0]).toMatchObject({ written_at: timestamp, written_by: expect.any(String) });

    // Only bill rates changed: the event names the roles whose bill rate changed, with the rates written.
    const events = await eventsOf('rate_card.changed');
    expect(events.at(-1)?.data).toEqual({
      project_id: project.id,
      effective_from: '2026-07-01',
      roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 90.5 }, { job_role_id: qa.id, hourly_rate: null, bill_rate: 60 }],
      changed_job_role_ids: expect.arrayContaining([dev.id, qa.id]),
    });

    // A role left out loses both its rates from the day: an ending entry with both null.
    await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 90.5 }], effective_from: '2026-10-01' }).expect(200);
    expect((await h.api.get(`${url}?date=2026-10-01`).expect(200)).body.body.roles.map((r: { job_role_id: string }) => r.job_role_id)).toEqual([dev.id]);
    const ended = (await h.api.get(`${url}/history`).expect(200)).body.body.entries.filter((e: { effective_from: string }) => e.effective_from === '2026-10-01');
    expect(ended).toEqual(expect.arrayContaining([expect.objectContaining({ job_role_id: qa.id, hourly_rate: null, bill_rate: null })]));
    expect((await eventsOf('rate_card.changed')).at(-1)?.data.changed_job_role_ids).toEqual([qa.id]);

    // A listed role without bill_rate keeps the bill rate it has on the day (a client that only knows
    // cost rates clears none): Dev from 2026-11-01 costs 55 and still bills 90.5; an explicit null clears it.
    const kept = await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 55 }], effective_from: '2026-11-01' }).expect(200);
    expect(kept.body.body.roles).toEqual([{ job_role_id: dev.id, job_role_name: dev.name, hourly_rate: 55, bill_rate: 90.5, effective_from: '2026-11-01' }]);
    expect((await eventsOf('rate_card.changed')).at(-1)?.data.roles).toEqual([{ job_role_id: dev.id, hourly_rate: 55, bill_rate: 90.5 }]);
    const cleared = await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 55, bill_rate: null }], effective_from: '2026-11-01' }).expect(200);
    expect(cleared.body.body.roles[0]).toMatchObject({ hourly_rate: 55, bill_rate: null });
  });

  it('marks the tasks a bill-rate change can change, as a cost-rate change does', async () => {
    const project = await createProject(h.api);
    const dev = await createJobRole(h.api);
    const url = `/api/projects/${project.id}/rate-card`;
    await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }], effective_from: '1970-01-01' }).expect(200);
    // The same card again changes nothing: no role is named.
    await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }], effective_from: '2026-08-01' }).expect(200);
    expect((await eventsOf('rate_card.changed')).at(-1)?.data.changed_job_role_ids).toEqual([]);
    const marks = () =>
      h.db('stale_inputs').where({ team_id: h.teamId, project_id: project.id, job_role_id: dev.id }).select(h.db.raw('from_day::text as from_day'));
    const before = (await marks()).length;
    // Only the bill rate changes from 2026-08-01: the role is marked from that day, as a cost change would be.
    await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 85 }], effective_from: '2026-08-01' }).expect(200);
    expect((await eventsOf('rate_card.changed')).at(-1)?.data.changed_job_role_ids).toEqual([dev.id]);
    const after = await marks();
    expect(after.length).toBe(before + 1);
    expect(after.map((m: { from_day: string }) => m.from_day)).toContain('2026-08-01');
  });

  it('refuses negative and over-precise bill rates per the currency with 400 naming the field, changing nothing', async () => {
    for (const [currency, fine, tooFine] of [['USD', 10.25, 10.255], ['JPY', 10, 10.5], ['KWD', 1.234, 1.2345]] as const) {
      const project = await createProject(h.api, { currency });
      const dev = await createJobRole(h.api);
      const url = `/api/projects/${project.id}/rate-card`;
      const ok = await h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 1, bill_rate: fine }], effective_from: '1970-01-01' }).expect(200);
      expect(ok.body.body.roles[0].bill_rate).toBe(fine);
      const history = (await h.api.get(`${url}/history`).expect(200)).body.body;
      await expectInvalid(h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 1, bill_rate: tooFine }] }), 'roles.0.bill_rate');
      await expectInvalid(h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 1, bill_rate: -1 }] }), 'roles.0.bill_rate');
      await expectInvalid(h.api.put(url, { roles: [{ job_role_id: dev.id, hourly_rate: 1, bill_rate: '5' }] }), 'roles.0.bill_rate');
      await expectInvalid(h.api.post(`${url}/preview`, { roles: [{ job_role_id: dev.id, hourly_rate: 1, bill_rate: -1 }] }), 'roles.0.bill_rate');
      expect((await h.api.get(`${url}/history`).expect(200)).body.body).toEqual(history);
    }
  });
});

describe('a member\'s own rates', () => {
  /** A project where Dev costs 50 and bills 80 from the beginning, QA has no rates, and Ann is a Dev. */
  async function devProject(fields: { currency?: string; time_zone?: string } = {}) {
    const project = await createProject(h.api, fields);
    const dev = await createJobRole(h.api, unique('Dev'));
    const qa = await createJobRole(h.api, unique('QA'));
    await h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }], effective_from: '1970-01-01' }).expect(200);
    const ann = await createMember(h.api, { name: 'Ann' });
    await addToProject(h.api, project.id, ann.id, dev.id);
    const rates = (memberId: string) => `/api/projects/${project.id}/members/${memberId}/rates`;
    return { project, dev, qa, ann, rates };
  }

  it('are dated: entries on or after the day are replaced, earlier ones kept; the history is answered', async () => {
    const { project, ann, rates } = await devProject();
    const first = await h.api.put(rates(ann.id), { hourly_rate: 70, effective_from: '2026-03-01' }).expect(200);
    expect(first.body.body).toEqual({
      project_id: project.id,
      team_member_id: ann.id,
      currency: 'USD',
      rate_unit: 'hour',
      overrides: [{ hourly_rate: 70, bill_rate: null, effective_from: '2026-03-01', written_at: timestamp, written_by: expect.any(String) }],
    });
    await h.api.put(rates(ann.id), { hourly_rate: 75, bill_rate: 100, effective_from: '2026-09-01' }).expect(200);
    // Dated mid-way: replaces the 2026-09-01 entry, keeps the 2026-03-01 one; the cost rate left out
    // keeps what her entry in force on 2026-06-01 had (70).
    const mid = await h.api.put(rates(ann.id), { bill_rate: 95, effective_from: '2026-06-01' }).expect(200);
    expect(mid.body.body.overrides.map((o: Record<string, unknown>) => [o.effective_from, o.hourly_rate, o.bill_rate])).toEqual([
      ['2026-03-01', 70, null],
      ['2026-06-01', 70, 95],
    ]);
    // The explanation lists the same entries.
    expect((await h.api.get(rates(ann.id)).expect(200)).body.body.overrides).toEqual(mid.body.body.overrides);
    // Each write is an event with the rates written.
    expect((await eventsOf('member_rates.changed')).at(-1)?.data).toEqual({
      project_id: project.id,
      team_member_id: ann.id,
      effective_from: '2026-06-01',
      hourly_rate: 70,
      bill_rate: 95,
    });
    // A null rate ends her own from its day: the role's applies again.
    const ended = await h.api.put(rates(ann.id), { hourly_rate: null, effective_from: '2026-08-01' }).expect(200);
    expect(ended.body.body.overrides.at(-1)).toMatchObject({ effective_from: '2026-08-01', hourly_rate: null, bill_rate: 95 });
  });

  it('take effect today in the project\'s time zone by default', async () => {
    const { ann, rates } = await devProject({ time_zone: 'Pacific/Auckland' });
    const res = await h.api.put(rates(ann.id), { hourly_rate: 65 }).expect(200);
    expect(res.body.body.overrides.map((o: { effective_from: string }) => o.effective_from)).toEqual(['2026-11-21']);
    expect((await h.api.get(rates(ann.id)).expect(200)).body.body).toMatchObject({
      date: '2026-11-21',
      hourly_rate: { amount: 65, source: 'member', effective_from: '2026-11-21' },
    });
    // In UTC it is still 2026-11-20: the role's rate.
    expect((await h.api.get(`${rates(ann.id)}?date=2026-11-20`).expect(200)).body.body.hourly_rate).toEqual({ amount: 50, source: 'role', effective_from: '1970-01-01' });
  });

  it('are explained on any day: member, then role, then none, each rate on its own', async () => {
    const { project, dev, qa, ann, rates } = await devProject();
    await h.api.put(rates(ann.id), { hourly_rate: 70, effective_from: '2026-03-01' }).expect(200);
    await h.api.put(rates(ann.id), { hourly_rate: null, bill_rate: 95, effective_from: '2026-06-01' }).expect(200);
    // Ann becomes QA (no rates in the card) from 2026-10-01.
    await h.api.put(`/api/projects/${project.id}/members/${ann.id}`, { job_role_id: qa.id, effective_from: '2026-10-01' }).expect(200);
    const explain = async (date: string) => (await viewer.get(`${rates(ann.id)}?date=${date}`).expect(200)).body.body;

    const february = await explain('2026-02-01');
    expect(february).toMatchObject({ project_id: project.id, team_member_id: ann.id, date: '2026-02-01', rate_unit: 'hour', job_role: { id: dev.id, name: dev.name } });
    expect([february.hourly_rate, february.bill_rate]).toEqual([
      { amount: 50, source: 'role', effective_from: '1970-01-01' },
      { amount: 80, source: 'role', effective_from: '1970-01-01' },
    ]);
    // 2026-03-01: her cost rate of 70 beats the role's 50; the bill rate is still the role's 80.
    const march = await explain('2026-03-01');
    expect([march.hourly_rate, march.bill_rate]).toEqual([
      { amount: 70, source: 'member', effective_from: '2026-03-01' },
      { amount: 80, source: 'role', effective_from: '1970-01-01' },
    ]);
    // 2026-06-15: the 2026-06-01 entry has no cost rate (the role's 50 again) and bills 95.
    const june = await explain('2026-06-15');
    expect([june.hourly_rate, june.bill_rate]).toEqual([
      { amount: 50, source: 'role', effective_from: '1970-01-01' },
      { amount: 95, source: 'member', effective_from: '2026-06-01' },
    ]);
    // 2026-10-01: QA has no rates: the cost rate is none, the bill rate still her own.
    const october = await explain('2026-10-01');
    expect(october.job_role).toEqual({ id: qa.id, name: qa.name });
    expect([october.hourly_rate, october.bill_rate]).toEqual([
      { amount: 0, source: 'none', effective_from: null },
      { amount: 95, source: 'member', effective_from: '2026-06-01' },
    ]);
    expect(october.overrides.map((o: { effective_from: string }) => o.effective_from)).toEqual(['2026-03-01', '2026-06-01']);

    // A member without a role or own rates: none for both, no role.
    const ben = await createMember(h.api, { name: 'Ben' });
    await addToProject(h.api, project.id, ben.id, null);
    expect((await viewer.get(rates(ben.id)).expect(200)).body.body).toEqual({
      project_id: project.id,
      team_member_id: ben.id,
      date: '2026-11-20',
      rate_unit: 'hour',
      job_role: null,
      hourly_rate: { amount: 0, source: 'none', effective_from: null },
      bill_rate: { amount: 0, source: 'none', effective_from: null },
      overrides: [],
    });
  });

  it('answer 400 for a bad date, 404 for someone who is not a member of the project', async () => {
    const { project, rates } = await devProject();
    const outsider = await createMember(h.api, { name: 'Olga' });
    for (const date of ['2026-02-30', 'today', '20261120']) await expectInvalid(viewer.get(`${rates(outsider.id)}?date=${date}`), 'date');
    expect((await viewer.get(rates(outsider.id)).expect(404)).body.error.code).toBe('TEAM_MEMBER_NOT_FOUND');
    await viewer.get(rates(UNKNOWN)).expect(404);
    await viewer.get(`/api/projects/${UNKNOWN}/members/${outsider.id}/rates`).expect(404);
    await viewer.get(`/api/projects/${project.id}/members/not-a-uuid/rates`).expect(400);
    await h.api.put(rates(outsider.id), { hourly_rate: 10 }).expect(404);
    await h.api.put(`/api/projects/${UNKNOWN}/members/${outsider.id}/rates`, { hourly_rate: 10 }).expect(404);
  });

  it('refuse bad input with 400 naming the field, and viewers and editors with 403, changing nothing', async () => {
    const { ann, rates } = await devProject();
    await h.api.put(rates(ann.id), { hourly_rate: 70, effective_from: '2026-03-01' }).expect(200);
    const before = (await h.api.get(rates(ann.id)).expect(200)).body.body;
    await expectInvalid(h.api.put(rates(ann.id), {}), 'hourly_rate');
    await expectInvalid(h.api.put(rates(ann.id), { effective_from: '2026-04-01' }), 'bill_rate');
    await expectInvalid(h.api.put(rates(ann.id), { hourly_rate: -1 }), 'hourly_rate');
    await expectInvalid(h.api.put(rates(ann.id), { bill_rate: -0.01 }), 'bill_rate');
    await expectInvalid(h.api.put(rates(ann.id), { hourly_rate: 10.255 }), 'hourly_rate');
    await expectInvalid(h.api.put(rates(ann.id), { bill_rate: '5' }), 'bill_rate');
    await expectInvalid(h.api.put(rates(ann.id), { hourly_rate: 5, effective_from: '2026-02-30' }), 'effective_from');
    await expectInvalid(h.api.put(rates(ann.id), { hourly_rate: 5, rate: 1 }), 'rate');
    expect((await editor.put(rates(ann.id), { hourly_rate: 1 }).expect(403)).body.error.code).toBe('FORBIDDEN');
    expect((await viewer.put(rates(ann.id), { hourly_rate: 1 }).expect(403)).body.error.code).toBe('FORBIDDEN');
    expect((await h.api.get(rates(ann.id)).expect(200)).body.body).toEqual(before);

    for (const [currency, tooFine] of [['JPY', 10.5], ['KWD', 1.2345]] as const) {
      const other = await devProject({ currency });
      await expectInvalid(h.api.put(other.rates(other.ann.id), { bill_rate: tooFine }), 'bill_rate');
      await expectInvalid(h.api.put(other.rates(other.ann.id), { hourly_rate: tooFine }), 'hourly_rate');
      expect((await h.api.get(other.rates(other.ann.id)).expect(200)).body.body.overrides).toEqual([]);
    }
  });

  it('hold a currency change that would strand their decimals (409), and go with the member when it leaves the project', async () => {
    const { project, ann, rates } = await devProject();
    await h.api.put(rates(ann.id), { bill_rate: 10.25, effective_from: '2026-03-01' }).expect(200);
    expect((await h.api.patch(`/api/projects/${project.id}`, { currency: 'JPY' }).expect(409)).body.error.code).toBe('CONFLICT');
    // A bill rate of the card with cents holds it as well.
    const carded = await devProject();
    await h.api.put(`/api/projects/${carded.project.id}/rate-card`, { roles: [{ job_role_id: carded.dev.id, hourly_rate: 50, bill_rate: 80.5 }], effective_from: '2026-01-01' }).expect(200);
    await h.api.patch(`/api/projects/${carded.project.id}`, { currency: 'JPY' }).expect(409);
    // Whole amounts convert.
    await h.api.put(rates(ann.id), { bill_rate: 10, effective_from: '2026-03-01' }).expect(200);
    expect((await h.api.patch(`/api/projects/${project.id}`, { currency: 'JPY' }).expect(200)).body.body.currency).toBe('JPY');

    await h.api.delete(`/api/projects/${project.id}/members/${ann.id}`).expect(200);
    await addToProject(h.api, project.id, ann.id, null);
    expect((await h.api.get(rates(ann.id)).expect(200)).body.body.overrides).toEqual([]);
  });

  it('mark the member\'s tasks from the day on (its logs from that day, its assigned tasks\' estimates)', async () => {
    const { project, ann, rates } = await devProject();
    const task = await createTask(h.api, project.id, { estimated_hours: 4, assignee_ids: [ann.id] });
    await logTime(h.api, task.id, ann.id, { hours: 2, logged_at: '2026-06-10T09:00:00Z' });
    const marks = () =>
      h.db('stale_inputs').where({ team_id: h.teamId, project_id: project.id, team_member_id: ann.id }).select(h.db.raw('from_day::text as from_day'));
    const before = (await marks()).length;
    await h.api.put(rates(ann.id), { bill_rate: 120, effective_from: '2026-06-01' }).expect(200);
    const after = await marks();
    expect(after.length).toBe(before + 1);
    expect(after.map((m: { from_day: string }) => m.from_day)).toContain('2026-06-01');
  });
});

describe('a project\'s rate unit and day length', () => {
  it('default to hours and 8-hour days, are set on create and PATCH, and shown on GET and in the list', async () => {
    const plain = await createProject(h.api);
    expect((await h.api.get(`/api/projects/${plain.id}`).expect(200)).body.body).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
    const created = await h.api.post('/api/projects', { name: unique('Days'), rate_unit: 'day', hours_per_day: 7.5 }).expect(201);
    expect(created.body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
    const id = created.body.body.id as string;
    expect((await h.api.patch(`/api/projects/${id}`, { hours_per_day: 7.25 }).expect(200)).body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 7.25 });
    expect((await h.api.patch(`/api/projects/${id}`, { rate_unit: 'hour', hours_per_day: 24 }).expect(200)).body.body).toMatchObject({ rate_unit: 'hour', hours_per_day: 24 });
    expect((await h.api.patch(`/api/projects/${id}`, { rate_unit: 'day', hours_per_day: 0.01 }).expect(200)).body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 0.01 });
    const listed = (await h.api.get('/api/projects').expect(200)).body.body.find((p: { id: string }) => p.id === id);
    expect(listed).toMatchObject({ rate_unit: 'day', hours_per_day: 0.01 });
    const changed = (await eventsOf('project.changed')).at(-1)?.data;
    expect(changed).toMatchObject({ project_id: id, action: 'updated', changed: ['rate_unit', 'hours_per_day'], project: { rate_unit: 'day', hours_per_day: 0.01 } });
  });

  it('refuse an unknown unit and a day outside (0, 24] or finer than 2 decimals with 400 naming the field', async () => {
    const project = await createProject(h.api);
    const url = `/api/projects/${project.id}`;
    await expectInvalid(h.api.post('/api/projects', { name: unique('P'), rate_unit: 'week' }), 'rate_unit');
    await expectInvalid(h.api.patch(url, { rate_unit: 'week' }), 'rate_unit');
    await expectInvalid(h.api.patch(url, { rate_unit: null }), 'rate_unit');
    for (const hours of [0, 25, 7.555, -8, '8', 24.01]) {
      await expectInvalid(h.api.post('/api/projects', { name: unique('P'), hours_per_day: hours }), 'hours_per_day');
      await expectInvalid(h.api.patch(url, { hours_per_day: hours }), 'hours_per_day');
    }
    expect((await h.api.get(url).expect(200)).body.body).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
  });

  it('change only while the project has no rate entry (card or overrides, null ones included): else 409', async () => {
    const role = await createJobRole(h.api);
    // A card entry with no rate at all still counts.
    const carded = await createProject(h.api);
    await h.api.put(`/api/projects/${carded.id}/rate-card`, { roles: [{ job_role_id: role.id, hourly_rate: null }], effective_from: '2026-01-01' }).expect(200);
    for (const change of [{ rate_unit: 'day' }, { hours_per_day: 7.5 }, { name: unique('P'), rate_unit: 'day' }]) {
      expect((await h.api.patch(`/api/projects/${carded.id}`, change).expect(409)).body.error.code).toBe('CONFLICT');
    }
    // Setting the values it already has changes nothing, and is no conflict.
    await h.api.patch(`/api/projects/${carded.id}`, { rate_unit: 'hour', hours_per_day: 8 }).expect(200);
    expect((await h.api.get(`/api/projects/${carded.id}`).expect(200)).body.body).toMatchObject({ name: carded.name, rate_unit: 'hour', hours_per_day: 8 });

    // An override (both rates null) alone.
    const overridden = (await h.api.post('/api/projects', { name: unique('Days'), rate_unit: 'day' }).expect(201)).body.body as { id: string };
    const member = await createMember(h.api, { name: 'Ola' });
    await addToProject(h.api, overridden.id, member.id, null);
    await h.api.patch(`/api/projects/${overridden.id}`, { hours_per_day: 6 }).expect(200);
    await h.api.put(`/api/projects/${overridden.id}/members/${member.id}/rates`, { hourly_rate: null, bill_rate: null }).expect(200);
    expect((await h.api.patch(`/api/projects/${overridden.id}`, { rate_unit: 'hour' }).expect(409)).body.error.code).toBe('CONFLICT');
    expect((await h.api.patch(`/api/projects/${overridden.id}`, { hours_per_day: 8 }).expect(409)).body.error.code).toBe('CONFLICT');
    expect((await h.api.get(`/api/projects/${overridden.id}`).expect(200)).body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 6 });
    // The explanation says the unit the rates are in.
    expect((await h.api.get(`/api/projects/${overridden.id}/members/${member.id}/rates`).expect(200)).body.body.rate_unit).toBe('day');
  });
});
