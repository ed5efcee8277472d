import { createApp } from '../../../src/app';
import { createTokenUsage, TokenUsage } from '../../../src/auth/token-usage';
import { setClock } from '../../../src/clock';
import { createLogger } from '../../../src/logger';
import { Api, Harness, startHarness } from '../../support/harness';

/*
 * A token's expiry (expires_in_days -> expires_at) and its last use to the minute (last_used_at),
 * on the service clock, which the tests move (src/clock.ts). The second app shares the database and
 * exposes its token usage recorder, so a test can wait for its writes and count them.
 */
let h: Harness;
let usage: TokenUsage;
let api: Api;
const usageWrites: unknown[][] = [];
const onQuery = (query: { sql: string; bindings: unknown[] }) => {
  if (query.sql.startsWith('insert into "api_token_usage"')) usageWrites.push(query.bindings);
};

beforeAll(async () => {
  h = await startHarness();
  usage = createTokenUsage(h.db);
  api = new Api(createApp({ db: h.db, logger: createLogger('silent'), tokenCacheSeconds: 3600, tokenUsage: usage }), h.api.token);
  h.db.on('query', onQuery);
});
afterAll(async () => {
  h.db.off('query', onQuery);
  setClock(undefined);
  await usage.settled();
  await h.close();
});
afterEach(() => setClock(undefined));

const DAY_MS = 86_400_000;
const tokenRow = async (id: string) => ((await api.get('/api/tokens').expect(200)).body.body as { id: string }[]).find((t) => t.id === id);

describe('expiry', () => {
  it('sets expires_at expires_in_days from now, and the token answers 401 from that instant, cached or not', async () => {
    const t0 = new Date('2026-11-27T10:15:42.123Z');
    setClock(t0);
    const created = (await api.post('/api/tokens', { name: 'two days', role: 'viewer', expires_in_days: 2 }).expect(201)).body.body;
    expect(created.expires_at).toBe('2026-11-29T10:15:42.123Z');
    const unused = (await api.post('/api/tokens', { name: 'one day, never used', role: 'viewer', expires_in_days: 1 }).expect(201)).body.body;
    expect(unused.expires_at).toBe('2026-11-28T10:15:42.123Z');
    expect(await tokenRow(created.id)).toMatchObject({ expires_at: '2026-11-29T10:15:42.123Z' });

    // Used (so cached for an hour by this app) until the last millisecond before its expiry.
    await api.as(created.token).get('/api/job-roles').expect(200);
    setClock(new Date(t0.getTime() + 2 * DAY_MS - 1));
    await api.as(created.token).get('/api/job-roles').expect(200);
    setClock(new Date(t0.getTime() + 2 * DAY_MS));
    const refused = await api.as(created.token).get('/api/job-roles').expect(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    // Never cached: the database refuses it.
    await api.as(unused.token).get('/api/job-roles').expect(401);
    // A token without expiry goes on.
    await api.get('/api/job-roles').expect(200);
  });

  it('accepts whole days from 1 to 3650 only, creating nothing otherwise', async () => {
    const count = async () => (await api.get('/api/tokens').expect(200)).body.body.length;
    const before = await count();
    for (const days of [0, -1, 1.5, '3', 3651, null]) {
      const res = await api.post('/api/tokens', { name: 'bad expiry', role: 'viewer', expires_in_days: days }).expect(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ path: 'expires_in_days' })]);
    }
    expect(await count()).toBe(before);
  });
});

describe('last use, to the minute', () => {
  it('records the minute of the last use with one write per minute, not one per request, and never moves it back', async () => {
    setClock(new Date('2026-11-27T10:15:05.000Z'));
    const created = (await api.post('/api/tokens', { name: 'used', role: 'viewer' }).expect(201)).body.body;
    expect(created.last_used_at).toBeNull();
    const writesFor = () => usageWrites.filter((bindings) => bindings.includes(created.id)).length;
    const use = async (times: number) => {
      for (let i = 0; i < times; i++) await api.as(created.token).get('/api/job-roles').expect(200);
      await usage.settled();
    };

    await use(5);
    expect(writesFor()).toBe(1);
    expect(await tokenRow(created.id)).toMatchObject({ last_used_at: '2026-11-27T10:15:00.000Z' });

    setClock(new Date('2026-11-27T10:15:59.999Z'));
    await use(3);
    expect(writesFor()).toBe(1);

    setClock(new Date('2026-11-27T10:16:00.000Z'));
    await use(4);
    expect(writesFor()).toBe(2);
    expect(await tokenRow(created.id)).toMatchObject({ last_used_at: '2026-11-27T10:16:00.000Z' });

    // A clock set back (another instance's, or this one's) never moves the recorded minute back.
    setClock(new Date('2026-11-27T10:14:30.000Z'));
    await use(1);
    expect(await tokenRow(created.id)).toMatchObject({ last_used_at: '2026-11-27T10:16:00.000Z' });
  });
});

describe('Cache-Control', () => {
  it('is no-store on every token answer and private, no-cache on the rest of /api, errors included', async () => {
    const created = await api.post('/api/tokens', { name: 'headers', role: 'viewer' }).expect(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expect((await api.get('/api/tokens').expect(200)).headers['cache-control']).toBe('no-store');
    expect((await api.delete(`/api/tokens/${created.body.body.id}`).expect(200)).headers['cache-control']).toBe('no-store');
    expect((await api.post('/api/teams', { name: 'not mine' }).expect(403)).headers['cache-control']).toBe('no-store');
    expect((await api.get('/api/job-roles').expect(200)).headers['cache-control']).toBe('private, no-cache');
    expect((await api.get('/api/session').expect(200)).headers['cache-control']).toBe('private, no-cache');
    expect((await api.as(undefined).get('/api/projects').expect(401)).headers['cache-control']).toBe('private, no-cache');
    expect((await api.get('/api/tasks/3f1c1b8e-1111-4222-8333-944455556666').expect(404)).headers['cache-control']).toBe('private, no-cache');
  });
});
