import { setClock } from '../../../src/clock';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { Api, Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, unique } from '../../support/fixtures';

/*
 * Section 8 of the contract (rules 1-4 and 9) on the rate inputs, as an outside checker reads it: every
 * answer compared whole with what was computed by hand, every refusal read back to show it changed
 * nothing (the member's explanation and history, the card's history, the project, the event feed).
 * The service clock is set: 2026-11-20 12:00 UTC unless a test moves it.
 */
const NOON = new Date('2026-11-20T12:00:00Z');
const ADMIN_NAME = 'acceptance admin';
let h: Harness;
let admin: Api;
let viewer: Api;
let editor: Api;
beforeAll(async () => {
  setClock(NOON);
  h = await startHarness();
  const token = async (name: string, role: string) => (await h.api.post('/api/tokens', { name, role }).expect(201)).body.body.token as string;
  admin = h.api.as(await token(ADMIN_NAME, 'admin'));
  viewer = h.api.as(await token('acceptance viewer', 'viewer'));
  editor = h.api.as(await token('acceptance editor', 'editor'));
});
afterEach(() => setClock(NOON));
afterAll(async () => {
  setClock(undefined);
  await h.close();
});

const UNKNOWN = '00000000-0000-4000-8000-0000000acc01';
const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);

type Res = { status: number; body: { success: boolean; error?: { code: string; message: string; details?: { path: string; message: string }[] } } };

/** A 400 in the contract's error shape, with a detail naming `path`. */
async function expect400(req: PromiseLike<Res>, path: string) {
  const res = await req;
  expect({ status: res.status, success: res.body.success, code: res.body.error?.code }).toEqual({ status: 400, success: false, code: 'VALIDATION_ERROR' });
  expect(typeof res.body.error?.message).toBe('string');
  expect(res.body.error?.details?.map((d) => d.path)).toContain(path);
}

async function expectStatus(req: PromiseLike<Res>, status: number, code: string) {
  const res = await req;
  expect({ status: res.status, success: res.body.success, code: res.body.error?.code }).toEqual({ status, success: false, code });
}

/** The last seq of the team's event feed (0 when empty). */
async function lastSeq(): Promise<number> {
  let after = 0;
  for (;;) {
    const page = (await h.api.get(`/api/events?after=${after}&limit=1000`).expect(200)).body.body as { events: { seq: number }[]; next_after: number | null };
    if (page.events.length === 0) return after;
    after = page.events.at(-1)!.seq;
  }
}

async function eventsSince(seq: number, type?: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const res = await h.api.get(`/api/events?after=${seq}&limit=1000${type ? `&type=${type}` : ''}`).expect(200);
  return res.body.body.events;
}

const ratesUrl = (projectId: string, memberId: string) => `/api/projects/${projectId}/members/${memberId}/rates`;
const cardUrl = (projectId: string) => `/api/projects/${projectId}/rate-card`;

/**
 * A project with roles Dev (cost 50, bill 80 from the beginning; from 2026-06-01 cost 60, bill null)
 * and QA (no entries), and members Ann (Dev) and Ben (no role).
 */
async function setup(fields: { currency?: string; time_zone?: string } = {}) {
  const project = await createProject(h.api, fields);
  const dev = await createJobRole(h.api, unique('Dev'));
  const qa = await createJobRole(h.api, unique('QA'));
  await admin.put(cardUrl(project.id), { roles: [{ job_role_id: dev.id, hourly_rate: 50, bill_rate: 80 }], effective_from: '1970-01-01' }).expect(200);
  await admin.put(cardUrl(project.id), { roles: [{ job_role_id: dev.id, hourly_rate: 60, bill_rate: null }], effective_from: '2026-06-01' }).expect(200);
  const ann = await createMember(h.api, { name: unique('Ann') });
  const ben = await createMember(h.api, { name: unique('Ben') });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await addToProject(h.api, project.id, ben.id, null);
  return { project, dev, qa, ann, ben };
}

/** Everything a refused write must leave as it was. */
async function snapshot(projectId: string, memberIds: string[]) {
  const explained = [];
  for (const id of memberIds) {
    explained.push((await h.api.get(ratesUrl(projectId, id)).expect(200)).body.body);
    explained.push((await h.api.get(`${ratesUrl(projectId, id)}?date=2026-01-15`).expect(200)).body.body);
  }
  return {
    explained,
    history: (await h.api.get(`${cardUrl(projectId)}/history`).expect(200)).body.body,
    project: (await h.api.get(`/api/projects/${projectId}`).expect(200)).body.body,
    seq: await lastSeq(),
  };
}

describe('rule 9: the explanation', () => {
  it('answers exactly the listed keys: a member with neither own rates nor role is "none" twice with null dates', async () => {
    const { project, ben } = await setup();
    const res = await viewer.get(ratesUrl(project.id, ben.id)).expect(200);
    expect(res.body).toEqual({
      success: true,
      body: {
        project_id: project.id,
        team_member_id: ben.id,
        date: '2026-11-20',
        rate_unit: 'hour',
        job_role: null,
        hourly_rate: { amount: 0, source: 'none', effective_from: null },
        bill_rate: { amount: 0, source: 'none', effective_from: null },
        overrides: [],
      },
    });
  });

  it('gives every override entry with when and by which token it was written', async () => {
    const { project, dev, ann } = await setup();
    const put = await admin.put(ratesUrl(project.id, ann.id), { hourly_rate: 72.5, bill_rate: null, effective_from: '2026-03-01' }).expect(200);
    expect(put.body.body).toEqual({
      project_id: project.id,
      team_member_id: ann.id,
      currency: 'USD',
      rate_unit: 'hour',
      overrides: [{ hourly_rate: 72.5, bill_rate: null, effective_from: '2026-03-01', written_at: timestamp, written_by: ADMIN_NAME }],
    });
    const res = await editor.get(`${ratesUrl(project.id, ann.id)}?date=2026-04-30`).expect(200);
    expect(res.body.body).toEqual({
      project_id: project.id,
      team_member_id: ann.id,
      date: '2026-04-30',
      rate_unit: 'hour',
      job_role: { id: dev.id, name: dev.name },
      hourly_rate: { amount: 72.5, source: 'member', effective_from: '2026-03-01' },
      bill_rate: { amount: 80, source: 'role', effective_from: '1970-01-01' },
      overrides: [{ hourly_rate: 72.5, bill_rate: null, effective_from: '2026-03-01', written_at: timestamp, written_by: ADMIN_NAME }],
    });
    expect(res.body.body.overrides).toEqual(put.body.body.overrides);
  });

  it('defaults the date to today in the project\'s zone by the service clock, and follows the clock across midnight', async () => {
    // 2026-11-20 12:00 UTC: 2026-11-21 in Kiritimati (UTC+14), 2026-11-20 in UTC, 2026-11-20 04:00 in Los Angeles.
    const east = await setup({ time_zone: 'Pacific/Kiritimati' });
    const west = await setup({ time_zone: 'America/Los_Angeles' });
    const utc = await setup();
    const dateOf = async (p: { project: { id: string }; ann: { id: string } }) => (await viewer.get(ratesUrl(p.project.id, p.ann.id)).expect(200)).body.body.date;
    expect([await dateOf(east), await dateOf(west), await dateOf(utc)]).toEqual(['2026-11-21', '2026-11-20', '2026-11-20']);
    // An override from 2026-11-21 (UTC project): the role's 60 until midnight, her 99 from it, nobody writing.
    await admin.put(ratesUrl(utc.project.id, utc.ann.id), { hourly_rate: 99, effective_from: '2026-11-21' }).expect(200);
    setClock(new Date('2026-11-20T23:59:59Z'));
    expect((await viewer.get(ratesUrl(utc.project.id, utc.ann.id)).expect(200)).body.body).toMatchObject({
      date: '2026-11-20',
      hourly_rate: { amount: 60, source: 'role', effective_from: '2026-06-01' },
    });
    setClock(new Date('2026-11-21T00:00:00Z'));
    expect((await viewer.get(ratesUrl(utc.project.id, utc.ann.id)).expect(200)).body.body).toMatchObject({
      date: '2026-11-21',
      hourly_rate: { amount: 99, source: 'member', effective_from: '2026-11-21' },
    });
    // Los Angeles is still on 2026-11-20 (16:00).
    expect((await viewer.get(ratesUrl(west.project.id, west.ann.id)).expect(200)).body.body.date).toBe('2026-11-20');
    // The rate card's default date is the same day.
    expect((await viewer.get(cardUrl(west.project.id)).expect(200)).body.body.date).toBe('2026-11-20');
    // 2026-11-21 14:00 in Kiritimati.
    expect((await viewer.get(cardUrl(east.project.id)).expect(200)).body.body.date).toBe('2026-11-21');
    setClock(new Date('2026-11-21T10:00:00Z'));
    expect((await viewer.get(ratesUrl(east.project.id, east.ann.id)).expect(200)).body.body.date).toBe('2026-11-22');
  });

  it('refuses a bad date or an unknown query field with 400 naming it', async () => {
    const { project, ann } = await setup();
    for (const date of ['2026-02-30', '2026-13-01', '26-11-20', '2026-11-20T00:00:00Z', '']) await expect400(viewer.get(`${ratesUrl(project.id, ann.id)}?date=${date}`), 'date');
    await expect400(viewer.get(`${ratesUrl(project.id, ann.id)}?day=2026-11-20`), 'day');
  });
});

describe('rule 3: precedence, each rate on its own', () => {
  it('takes the member\'s own rate where non-null, else the role\'s where non-null, else none, per rate and per day', async () => {
    const { project, dev, qa, ann } = await setup();
    const url = ratesUrl(project.id, ann.id);
    // Own entries: from 2026-02-01 bill 100 only (cost left null); from 2026-04-01 cost 70, bill null.
    await admin.put(url, { hourly_rate: null, bill_rate: 100, effective_from: '2026-02-01' }).expect(200);
    await admin.put(url, { hourly_rate: 70, bill_rate: null, effective_from: '2026-04-01' }).expect(200);
    // Ann becomes QA (no card entries) from 2026-09-01.
    await admin.put(`/api/projects/${project.id}/members/${ann.id}`, { job_role_id: qa.id, effective_from: '2026-09-01' }).expect(200);
    const on = async (date: string) => {
      const body = (await viewer.get(`${url}?date=${date}`).expect(200)).body.body;
      return { job_role: body.job_role, hourly_rate: body.hourly_rate, bill_rate: body.bill_rate };
    };
    const DEV = { id: dev.id, name: dev.name };
    const QA = { id: qa.id, name: qa.name };
    // 2026-01-31: nothing of her own yet: Dev's 50 / 80.
    expect(await on('2026-01-31')).toEqual({
      job_role: DEV,
      hourly_rate: { amount: 50, source: 'role', effective_from: '1970-01-01' },
      bill_rate: { amount: 80, source: 'role', effective_from: '1970-01-01' },
    });
    // 2026-02-01: her cost rate is null, so the role's 50; her bill rate 100 beats the role's 80.
    expect(await on('2026-02-01')).toEqual({
      job_role: DEV,
      hourly_rate: { amount: 50, source: 'role', effective_from: '1970-01-01' },
      bill_rate: { amount: 100, source: 'member', effective_from: '2026-02-01' },
    });
    // 2026-04-01: her own cost 70; her entry in force has no bill rate, so the role's 80 (not her older 100).
    expect(await on('2026-04-01')).toEqual({
      job_role: DEV,
      hourly_rate: { amount: 70, source: 'member', effective_from: '2026-04-01' },
      bill_rate: { amount: 80, source: 'role', effective_from: '1970-01-01' },
    });
    // 2026-06-01: the card's Dev entry in force has no bill rate: none (the older 80 does not show through).
    expect(await on('2026-06-01')).toEqual({
      job_role: DEV,
      hourly_rate: { amount: 70, source: 'member', effective_from: '2026-04-01' },
      bill_rate: { amount: 0, source: 'none', effective_from: null },
    });
    // 2026-09-01: QA has no rates; her cost rate still her own.
    expect(await on('2026-09-01')).toEqual({
      job_role: QA,
      hourly_rate: { amount: 70, source: 'member', effective_from: '2026-04-01' },
      bill_rate: { amount: 0, source: 'none', effective_from: null },
    });
    // Ending both of her own from 2026-10-01: QA's (none) from then.
    await admin.put(url, { hourly_rate: null, bill_rate: null, effective_from: '2026-10-01' }).expect(200);
    expect(await on('2026-10-01')).toEqual({
      job_role: QA,
      hourly_rate: { amount: 0, source: 'none', effective_from: null },
      bill_rate: { amount: 0, source: 'none', effective_from: null },
    });
    // A zero rate is a rate: the member's own 0 beats the role's.
    await admin.put(url, { hourly_rate: 0, bill_rate: 0, effective_from: '2026-05-01' }).expect(200);
    expect(await on('2026-05-15')).toEqual({
      job_role: DEV,
      hourly_rate: { amount: 0, source: 'member', effective_from: '2026-05-01' },
      bill_rate: { amount: 0, source: 'member', effective_from: '2026-05-01' },
    });
  });

  it('takes a role whose card entry has only a bill rate as the source of that rate only', async () => {
    const { project, qa, ben } = await setup();
    await admin.put(`/api/projects/${project.id}/members/${ben.id}`, { job_role_id: qa.id, effective_from: '2026-01-01' }).expect(200);
    await admin.put(cardUrl(project.id), { roles: [{ job_role_id: qa.id, hourly_rate: null, bill_rate: 45.5 }], effective_from: '2026-07-01' }).expect(200);
    const body = (await viewer.get(`${ratesUrl(project.id, ben.id)}?date=2026-07-01`).expect(200)).body.body;
    expect([body.job_role, body.hourly_rate, body.bill_rate]).toEqual([
      { id: qa.id, name: qa.name },
      { amount: 0, source: 'none', effective_from: null },
      { amount: 45.5, source: 'role', effective_from: '2026-07-01' },
    ]);
    // Before 2026-01-01 Ben had no role (his first entry counts from the beginning).
    const before = (await viewer.get(`${ratesUrl(project.id, ben.id)}?date=2025-12-31`).expect(200)).body.body;
    expect(before.job_role).toBeNull();
  });
});

describe('rule 2: overrides, dated', () => {
  it('replace entries on or after effective_from and keep earlier ones', async () => {
    const { project, ann } = await setup();
    const url = ratesUrl(project.id, ann.id);
    await admin.put(url, { hourly_rate: 61, bill_rate: 91, effective_from: '2026-01-01' }).expect(200);
    await admin.put(url, { hourly_rate: 62, bill_rate: 92, effective_from: '2026-05-01' }).expect(200);
    await admin.put(url, { hourly_rate: 63, bill_rate: 93, effective_from: '2026-09-01' }).expect(200);
    // On 2026-05-01 exactly: replaces 2026-05-01 and 2026-09-01, keeps 2026-01-01.
    const res = await admin.put(url, { hourly_rate: 64, bill_rate: 94, effective_from: '2026-05-01' }).expect(200);
    const rows = (body: { overrides: Record<string, unknown>[] }) => body.overrides.map((o) => [o.effective_from, o.hourly_rate, o.bill_rate]);
    expect(rows(res.body.body)).toEqual([
      ['2026-01-01', 61, 91],
      ['2026-05-01', 64, 94],
    ]);
    // A rate left out keeps what her entry in force on the day had (documented in docs/api.md): on the
    // day of an entry, that entry's; mid-way, the earlier one's (later entries still replaced).
    const same = await admin.put(url, { bill_rate: 99, effective_from: '2026-05-01' }).expect(200);
    expect(rows(same.body.body)).toEqual([
      ['2026-01-01', 61, 91],
      ['2026-05-01', 64, 99],
    ]);
    const mid = await admin.put(url, { hourly_rate: 66, effective_from: '2026-03-01' }).expect(200);
    expect(rows(mid.body.body)).toEqual([
      ['2026-01-01', 61, 91],
      ['2026-03-01', 66, 91],
    ]);
    // Before every entry: replaces them all.
    const all = await admin.put(url, { hourly_rate: 65, bill_rate: 95, effective_from: '1970-01-01' }).expect(200);
    expect(rows(all.body.body)).toEqual([['1970-01-01', 65, 95]]);
    expect(rows((await viewer.get(url).expect(200)).body.body)).toEqual([['1970-01-01', 65, 95]]);
    // The rate card's PUT likewise: entries dated on or after its day replaced, earlier kept.
    const history = (await viewer.get(`${cardUrl(project.id)}/history`).expect(200)).body.body.entries;
    expect(history.map((e: Record<string, unknown>) => [e.effective_from, e.hourly_rate, e.bill_rate])).toEqual([
      ['1970-01-01', 50, 80],
      ['2026-06-01', 60, null],
    ]);
    await admin.put(cardUrl(project.id), { roles: [], effective_from: '2026-03-01' }).expect(200);
    const after = (await viewer.get(`${cardUrl(project.id)}/history`).expect(200)).body.body.entries;
    expect(after.map((e: Record<string, unknown>) => [e.effective_from, e.hourly_rate, e.bill_rate])).toEqual([
      ['1970-01-01', 50, 80],
      ['2026-03-01', null, null],
    ]);
  });

  it('take effect today in the project\'s zone when effective_from is left out', async () => {
    const east = await setup({ time_zone: 'Pacific/Kiritimati' });
    const res = await admin.put(ratesUrl(east.project.id, east.ann.id), { bill_rate: 130 }).expect(200);
    expect(res.body.body.overrides.map((o: { effective_from: string }) => o.effective_from)).toEqual(['2026-11-21']);
    setClock(new Date('2026-11-20T09:00:00Z')); // 2026-11-20 01:00 in Los Angeles
    const west = await setup({ time_zone: 'America/Los_Angeles' });
    setClock(new Date('2026-11-20T05:00:00Z')); // 2026-11-19 21:00 in Los Angeles
    const res2 = await admin.put(ratesUrl(west.project.id, west.ann.id), { hourly_rate: 40 }).expect(200);
    expect(res2.body.body.overrides.map((o: { effective_from: string }) => o.effective_from)).toEqual(['2026-11-19']);
    // The card as well.
    const card = await admin.put(cardUrl(west.project.id), { roles: [{ job_role_id: west.dev.id, hourly_rate: 61, bill_rate: 81 }] }).expect(200);
    expect(card.body.body.date).toBe('2026-11-19');
    expect(card.body.body.roles[0].effective_from).toBe('2026-11-19');
  });

  it('are events: member_rates.changed with the rates written, rate_card.changed with the card written', async () => {
    const { project, dev, qa, ann } = await setup();
    const seq = await lastSeq();
    await admin.put(ratesUrl(project.id, ann.id), { hourly_rate: 70.25, bill_rate: null, effective_from: '2026-08-01' }).expect(200);
    await admin.put(cardUrl(project.id), { roles: [{ job_role_id: dev.id, hourly_rate: 60, bill_rate: 85 }, { job_role_id: qa.id, hourly_rate: 40, bill_rate: null }], effective_from: '2026-10-01' }).expect(200);
    const events = await eventsSince(seq);
    expect(events.map((e) => e.type)).toEqual(['member_rates.changed', 'rate_card.changed']);
    expect(events[0]).toMatchObject({ id: expect.any(String), seq: expect.any(Number), occurred_at: timestamp });
    expect(events[0]!.data).toEqual({ project_id: project.id, team_member_id: ann.id, effective_from: '2026-08-01', hourly_rate: 70.25, bill_rate: null });
    expect(events[1]!.data).toEqual({
      project_id: project.id,
      effective_from: '2026-10-01',
      roles: [
        { job_role_id: dev.id, hourly_rate: 60, bill_rate: 85 },
        { job_role_id: qa.id, hourly_rate: 40, bill_rate: null },
      ],
      changed_job_role_ids: expect.arrayContaining([dev.id, qa.id]),
    });
    expect((events[1]!.data.changed_job_role_ids as string[]).length).toBe(2);
    // The feed filters by type.
    expect((await eventsSince(seq, 'member_rates.changed')).map((e) => e.type)).toEqual(['member_rates.changed']);
    // A preview writes nothing and is no event.
    const before = await snapshot(project.id, [ann.id]);
    await admin.post(`${cardUrl(project.id)}/preview`, { roles: [{ job_role_id: dev.id, hourly_rate: 1, bill_rate: 2 }], effective_from: '2026-01-01' }).expect(200);
    expect(await snapshot(project.id, [ann.id])).toEqual(before);
  });
});

describe('access and tenancy', () => {
  it('lets viewers and editors read, and only admins write (403 FORBIDDEN, nothing written)', async () => {
    const { project, ann } = await setup();
    const before = await snapshot(project.id, [ann.id]);
    await expectStatus(viewer.put(ratesUrl(project.id, ann.id), { hourly_rate: 1 }), 403, 'FORBIDDEN');
    await expectStatus(editor.put(ratesUrl(project.id, ann.id), { hourly_rate: 1 }), 403, 'FORBIDDEN');
    await expectStatus(editor.put(cardUrl(project.id), { roles: [] }), 403, 'FORBIDDEN');
    await expectStatus(viewer.patch(`/api/projects/${project.id}`, { rate_unit: 'day' }), 403, 'FORBIDDEN');
    await h.api.as(undefined).get(ratesUrl(project.id, ann.id)).expect(401);
    await h.api.as(undefined).put(ratesUrl(project.id, ann.id), { hourly_rate: 1 }).expect(401);
    expect(await snapshot(project.id, [ann.id])).toEqual(before);
  });

  it('answers 404 for a non-member, an unknown member or project, and another team\'s project or member', async () => {
    const { project, ann } = await setup();
    const outsider = await createMember(h.api, { name: unique('Olga') });
    const other = await createTeamWithAdmin(h.db, unique('Rivals of rates'));
    const rival = h.api.as(other.token);
    const rivalProject = await createProject(rival);
    const rivalMember = await createMember(rival, { name: unique('Rita') });
    await addToProject(rival, rivalProject.id, rivalMember.id, null);
    await rival.put(ratesUrl(rivalProject.id, rivalMember.id), { hourly_rate: 5, effective_from: '2026-01-01' }).expect(200);
    const before = await snapshot(project.id, [ann.id]);
    const rivalBefore = (await rival.get(ratesUrl(rivalProject.id, rivalMember.id)).expect(200)).body.body;

    const cases: [string, string][] = [
      [ratesUrl(project.id, outsider.id), 'TEAM_MEMBER_NOT_FOUND'],
      [ratesUrl(project.id, UNKNOWN), 'TEAM_MEMBER_NOT_FOUND'],
      [ratesUrl(project.id, rivalMember.id), 'TEAM_MEMBER_NOT_FOUND'],
      [ratesUrl(UNKNOWN, ann.id), 'PROJECT_NOT_FOUND'],
      [ratesUrl(rivalProject.id, rivalMember.id), 'PROJECT_NOT_FOUND'],
      [ratesUrl(rivalProject.id, ann.id), 'PROJECT_NOT_FOUND'],
    ];
    for (const [url, code] of cases) {
      await expectStatus(viewer.get(url), 404, code);
      await expectStatus(admin.put(url, { hourly_rate: 10 }), 404, code);
    }
    await expectStatus(admin.put(cardUrl(rivalProject.id), { roles: [] }), 404, 'PROJECT_NOT_FOUND');
    await expectStatus(viewer.get(cardUrl(rivalProject.id)), 404, 'PROJECT_NOT_FOUND');
    await expectStatus(admin.patch(`/api/projects/${rivalProject.id}`, { rate_unit: 'day' }), 404, 'PROJECT_NOT_FOUND');
    // A member who left the project is no longer one.
    await admin.put(ratesUrl(project.id, ann.id), { hourly_rate: 1, effective_from: '2026-01-01' }).expect(200);
    await admin.delete(`/api/projects/${project.id}/members/${ann.id}`).expect(200);
    await expectStatus(viewer.get(ratesUrl(project.id, ann.id)), 404, 'TEAM_MEMBER_NOT_FOUND');
    await expectStatus(admin.put(ratesUrl(project.id, ann.id), { hourly_rate: 1 }), 404, 'TEAM_MEMBER_NOT_FOUND');
    // Path ids that are not UUIDs are a 400.
    await expectStatus(viewer.get(ratesUrl(project.id, 'nope')), 400, 'INVALID_ID');
    await expectStatus(admin.put(ratesUrl('nope', ann.id), { hourly_rate: 1 }), 400, 'INVALID_ID');
    expect((await rival.get(ratesUrl(rivalProject.id, rivalMember.id)).expect(200)).body.body).toEqual(rivalBefore);
    expect(before.explained[0].overrides).toEqual([]);
  });
});

describe('400: named field, nothing changed', () => {
  it('refuses bad override bodies', async () => {
    const { project, ann, ben } = await setup();
    const url = ratesUrl(project.id, ann.id);
    await admin.put(url, { hourly_rate: 70, bill_rate: 90, effective_from: '2026-03-01' }).expect(200);
    const before = await snapshot(project.id, [ann.id, ben.id]);
    const bad: [unknown, string][] = [
      [{}, 'hourly_rate'],
      [{}, 'bill_rate'],
      [{ effective_from: '2026-04-01' }, 'hourly_rate'],
      [{ hourly_rate: -1 }, 'hourly_rate'],
      [{ bill_rate: -0.01 }, 'bill_rate'],
      [{ hourly_rate: 10.255 }, 'hourly_rate'],
      [{ bill_rate: 10.001, hourly_rate: 1 }, 'bill_rate'],
      [{ hourly_rate: '5' }, 'hourly_rate'],
      [{ hourly_rate: true }, 'hourly_rate'],
      [{ bill_rate: [5] }, 'bill_rate'],
      [{ bill_rate: { amount: 5 } }, 'bill_rate'],
      [{ hourly_rate: 5, effective_from: 20260401 }, 'effective_from'],
      [{ hourly_rate: 5, effective_from: '2026-02-30' }, 'effective_from'],
      [{ hourly_rate: 5, effective_from: '2026-04-01T00:00:00Z' }, 'effective_from'],
      [{ hourly_rate: 5, effective_from: null }, 'effective_from'],
      [{ hourly_rate: 5, rate: 1 }, 'rate'],
      [{ hourly_rate: 5, team_member_id: ann.id }, 'team_member_id'],
      [{ hourly_rate: 1e12 }, 'hourly_rate'],
    ];
    for (const [body, path] of bad) await expect400(admin.put(url, body), path);
    for (const body of [[], null, 'x', 5]) {
      const res = await admin.put(url).set('Content-Type', 'application/json').send(JSON.stringify(body));
      expect({ status: res.status, success: res.body.success }).toEqual({ status: 400, success: false });
    }
    // A non-member with an over-precise rate changes nothing either.
    await expectStatus(admin.put(ratesUrl(project.id, UNKNOWN), { hourly_rate: 5.555 }), 404, 'TEAM_MEMBER_NOT_FOUND');
    expect(await snapshot(project.id, [ann.id, ben.id])).toEqual(before);
  });

  it('allows exactly the currency\'s decimals on overrides and the card (JPY 0, USD 2, KWD 3), refuses one more', async () => {
    for (const [currency, fine, tooFine] of [['JPY', 1234, 1234.5], ['USD', 12.34, 12.345], ['KWD', 1.234, 1.2345], ['JPY', 0, 0.1]] as const) {
      const { project, dev, ann } = await setup({ currency });
      const url = ratesUrl(project.id, ann.id);
      const before = await snapshot(project.id, [ann.id]);
      for (const field of ['hourly_rate', 'bill_rate']) {
        await expect400(admin.put(url, { [field]: tooFine }), field);
        await expect400(admin.put(cardUrl(project.id), { roles: [{ job_role_id: dev.id, hourly_rate: 1, bill_rate: 1, [field]: tooFine }] }), `roles.0.${field}`);
        await expect400(admin.post(`${cardUrl(project.id)}/preview`, { roles: [{ job_role_id: dev.id, hourly_rate: 1, [field]: tooFine }] }), `roles.0.${field}`);
      }
      expect(await snapshot(project.id, [ann.id])).toEqual(before);
      const ok = await admin.put(url, { hourly_rate: fine, bill_rate: fine, effective_from: '2026-10-01' }).expect(200);
      expect(ok.body.body).toMatchObject({ currency, overrides: [{ hourly_rate: fine, bill_rate: fine, effective_from: '2026-10-01' }] });
      expect((await viewer.get(`${url}?date=2026-10-01`).expect(200)).body.body.hourly_rate).toEqual({ amount: fine, source: 'member', effective_from: '2026-10-01' });
      await admin.put(cardUrl(project.id), { roles: [{ job_role_id: dev.id, hourly_rate: fine, bill_rate: fine }], effective_from: '2026-10-01' }).expect(200);
    }
  });

  it('refuses negative card rates and wrong types on the card', async () => {
    const { project, dev, ann } = await setup();
    const before = await snapshot(project.id, [ann.id]);
    const bad: [unknown, string][] = [
      [{ roles: [{ job_role_id: dev.id, hourly_rate: -5 }] }, 'roles.0.hourly_rate'],
      [{ roles: [{ job_role_id: dev.id, hourly_rate: 5, bill_rate: -5 }] }, 'roles.0.bill_rate'],
      [{ roles: [{ job_role_id: dev.id, hourly_rate: 5, bill_rate: '5' }] }, 'roles.0.bill_rate'],
      [{ roles: [{ job_role_id: dev.id }] }, 'roles.0.hourly_rate'],
      [{ roles: [{ job_role_id: dev.id, hourly_rate: 5, rate: 1 }] }, 'roles.0.rate'],
      [{ roles: [{ job_role_id: dev.id, hourly_rate: 5 }], effective_from: '2026-11-31' }, 'effective_from'],
      [{}, 'roles'],
    ];
    for (const [body, path] of bad) await expect400(admin.put(cardUrl(project.id), body), path);
    expect(await snapshot(project.id, [ann.id])).toEqual(before);
  });

  it('refuses an unknown rate_unit and hours_per_day outside (0, 24] or with 3 decimals, on create and PATCH', async () => {
    const { project, ann } = await setup();
    const empty = await createProject(h.api);
    const names = async () => ((await h.api.get('/api/projects').expect(200)).body.body as { name: string }[]).map((p) => p.name).sort();
    const projectsBefore = await names();
    const before = await snapshot(project.id, [ann.id]);
    const emptyBefore = (await h.api.get(`/api/projects/${empty.id}`).expect(200)).body.body;
    const seq = await lastSeq();
    const bad: [Record<string, unknown>, string][] = [
      [{ rate_unit: 'week' }, 'rate_unit'],
      [{ rate_unit: 'Hour' }, 'rate_unit'],
      [{ rate_unit: 'hours' }, 'rate_unit'],
      [{ rate_unit: '' }, 'rate_unit'],
      [{ rate_unit: null }, 'rate_unit'],
      [{ rate_unit: 1 }, 'rate_unit'],
      [{ hours_per_day: 0 }, 'hours_per_day'],
      [{ hours_per_day: 24.01 }, 'hours_per_day'],
      [{ hours_per_day: 7.555 }, 'hours_per_day'],
      [{ hours_per_day: 25 }, 'hours_per_day'],
      [{ hours_per_day: -7.5 }, 'hours_per_day'],
      [{ hours_per_day: 0.001 }, 'hours_per_day'],
      [{ hours_per_day: '7.5' }, 'hours_per_day'],
      [{ hours_per_day: null }, 'hours_per_day'],
      [{ rate_unit: 'day', hours_per_day: 7.555 }, 'hours_per_day'],
    ];
    for (const [fields, path] of bad) {
      await expect400(h.api.post('/api/projects', { name: unique('Bad'), ...fields }), path);
      await expect400(h.api.patch(`/api/projects/${empty.id}`, fields), path);
      await expect400(h.api.patch(`/api/projects/${project.id}`, fields), path);
    }
    expect(await names()).toEqual(projectsBefore);
    expect((await h.api.get(`/api/projects/${empty.id}`).expect(200)).body.body).toEqual(emptyBefore);
    expect(await snapshot(project.id, [ann.id])).toEqual({ ...before, seq });
    expect(await eventsSince(seq)).toEqual([]);
  });
});

describe('rule 4: rate_unit and hours_per_day', () => {
  it('default to "hour" and 8, take 24 and 0.01 and 7.5, and are answered on create, GET and PATCH', async () => {
    const plain = (await h.api.post('/api/projects', { name: unique('Plain') }).expect(201)).body.body;
    expect(plain).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
    expect(Object.keys(plain).sort()).toEqual(['budget', 'budget_alerts', 'budget_period', 'created_at', 'currency', 'hours_budget', 'hours_per_day', 'id', 'name', 'rate_unit', 'time_zone', 'updated_at']);
    for (const hours of [24, 0.01, 7.5, 7.25]) {
      const created = (await h.api.post('/api/projects', { name: unique('Days'), rate_unit: 'day', hours_per_day: hours }).expect(201)).body.body;
      expect(created).toMatchObject({ rate_unit: 'day', hours_per_day: hours });
      expect((await viewer.get(`/api/projects/${created.id}`).expect(200)).body.body).toMatchObject({ rate_unit: 'day', hours_per_day: hours });
    }
    const patched = await editor.patch(`/api/projects/${plain.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
    expect(patched.body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
  });

  it('409 CONFLICT on a change while card or override entries exist, nothing changed; allowed when none', async () => {
    const role = await createJobRole(h.api);
    // Card entries.
    const carded = (await h.api.post('/api/projects', { name: unique('Carded'), rate_unit: 'day', hours_per_day: 7.5 }).expect(201)).body.body;
    await admin.put(cardUrl(carded.id), { roles: [{ job_role_id: role.id, hourly_rate: 600, bill_rate: 900 }], effective_from: '2026-01-01' }).expect(200);
    let seq = await lastSeq();
    for (const change of [{ rate_unit: 'hour' }, { hours_per_day: 8 }, { rate_unit: 'hour', hours_per_day: 7.5 }, { name: unique('Renamed'), hours_per_day: 7.25 }]) {
      await expectStatus(h.api.patch(`/api/projects/${carded.id}`, change), 409, 'CONFLICT');
    }
    expect((await h.api.get(`/api/projects/${carded.id}`).expect(200)).body.body).toEqual(carded);
    expect(await eventsSince(seq)).toEqual([]);
    // The same values are no change.
    await h.api.patch(`/api/projects/${carded.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
    await h.api.patch(`/api/projects/${carded.id}`, { hours_per_day: 7.50 }).expect(200);

    // Override entries only.
    const overridden = (await h.api.post('/api/projects', { name: unique('Overridden') }).expect(201)).body.body;
    const zoe = await createMember(h.api, { name: unique('Zoe') });
    await addToProject(h.api, overridden.id, zoe.id, null);
    // No entries yet: allowed.
    const toDay = await h.api.patch(`/api/projects/${overridden.id}`, { rate_unit: 'day', hours_per_day: 7.5 }).expect(200);
    expect(toDay.body.body).toMatchObject({ rate_unit: 'day', hours_per_day: 7.5 });
    await admin.put(ratesUrl(overridden.id, zoe.id), { bill_rate: 800 }).expect(200);
    const held = (await h.api.get(`/api/projects/${overridden.id}`).expect(200)).body.body;
    seq = await lastSeq();
    await expectStatus(h.api.patch(`/api/projects/${overridden.id}`, { rate_unit: 'hour' }), 409, 'CONFLICT');
    await expectStatus(h.api.patch(`/api/projects/${overridden.id}`, { hours_per_day: 8 }), 409, 'CONFLICT');
    expect((await h.api.get(`/api/projects/${overridden.id}`).expect(200)).body.body).toEqual(held);
    expect(await eventsSince(seq)).toEqual([]);
    // The explanation answers in the project's unit: the day rate as entered.
    expect((await viewer.get(ratesUrl(overridden.id, zoe.id)).expect(200)).body.body).toMatchObject({
      rate_unit: 'day',
      bill_rate: { amount: 800, source: 'member', effective_from: '2026-11-20' },
    });
    // Invalid input alongside a held change is a 400 naming the field, not the 409.
    for (const [fields, path] of [
      [{ rate_unit: 'hour', time_zone: 'Mars/Olympus' }, 'time_zone'],
      [{ hours_per_day: 8, currency: 'XXX' }, 'currency'],
      [{ rate_unit: 'hour', budget: 10.001 }, 'budget'],
    ] as const) {
      await expect400(h.api.patch(`/api/projects/${overridden.id}`, fields), path);
    }
    expect((await h.api.get(`/api/projects/${overridden.id}`).expect(200)).body.body).toEqual(held);
    // Zoe leaves (her entries go with her): no entries, the change is allowed again.
    await admin.delete(`/api/projects/${overridden.id}/members/${zoe.id}`).expect(200);
    expect((await h.api.patch(`/api/projects/${overridden.id}`, { rate_unit: 'hour', hours_per_day: 8 }).expect(200)).body.body).toMatchObject({ rate_unit: 'hour', hours_per_day: 8 });
  });
});
