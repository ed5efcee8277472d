import { randomUUID } from 'node:crypto';
import { createApp } from '../../../src/app';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { Api, Harness, startHarness } from '../../support/harness';

/*
 * GET /api/webhooks and GET /api/webhooks/:id/deliveries answer pages like every list route
 * (docs/api.md, "Pagination"): at most `limit` rows, the next page in `Link: <url>; rel="next"`.
 * Rows are written straight to the tables with chosen instants (ties included), and each walk is
 * checked against the order worked out by hand; another team's rows, made alike, never show.
 */

let h: Harness;
const logger = createLogger('silent');
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const NEXT = /^<([^>]+)>; rel="next"$/;

/** An admin of a new team (through an app that takes webhooks to any address), and the team's id. */
async function newTeam(): Promise<{ api: Api; teamId: string }> {
  const { token, team } = await createTeamWithAdmin(h.db, `webhook paging ${randomUUID()}`);
  return { api: new Api(createApp({ db: h.db, logger, webhookAllowPrivate: true }), token), teamId: team.id };
}

/** The ids of every page of `url`, following the Link headers; each link keeps the path and limit. */
async function walk(api: Api, url: string): Promise<string[][]> {
  const pages: string[][] = [];
  let next: string | undefined = url;
  while (next) {
    const res = await api.get(next).expect(200);
    pages.push((res.body.body as { id: string }[]).map((row) => row.id));
    const link = res.headers.link as string | undefined;
    if (link === undefined) break;
    const target = NEXT.exec(link)?.[1];
    if (!target) throw new Error(`not a next link: ${link}`);
    const parsed = new URL(target, 'http://service.example');
    expect(parsed.pathname).toBe(url.split('?')[0]);
    expect(parsed.searchParams.get('limit')).toBe(new URL(url, 'http://service.example').searchParams.get('limit'));
    next = target;
    if (pages.length > 20) throw new Error('the pages never end');
  }
  return pages;
}

/** Expects a 400 VALIDATION_ERROR whose details name `path`. */
async function expectInvalid(api: Api, url: string, path: string) {
  const res = await api.get(url);
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  expect(res.body.error.details?.map((d: { path: string }) => d.path)).toContain(path);
}

async function cursorOf(api: Api, url: string): Promise<string> {
  const res = await api.get(`${url}?limit=1`).expect(200);
  return new URL(NEXT.exec(res.headers.link as string)?.[1] ?? '/', 'http://x').searchParams.get('after') as string;
}

async function insertWebhooks(teamId: string, createdAt: readonly string[]): Promise<{ id: string; at: string }[]> {
  const made: { id: string; at: string }[] = [];
  for (const at of createdAt) {
    const [row] = await h.db('webhooks').insert({ team_id: teamId, url: 'https://hooks.example.com/x', event_types: ['*'], secret: 'whsec_x', created_at: at }).returning('id');
    made.push({ id: row.id, at });
  }
  return made;
}

describe('GET /api/webhooks', () => {
  it('pages oldest first, then by id among webhooks made at the same instant', async () => {
    const { api, teamId } = await newTeam();
    const other = await newTeam();
    const instants = ['2026-11-20 09:00:00.000002+00', '2026-11-20 09:00:00+00', '2026-11-20 09:00:00.000002+00', '2026-11-19 09:00:00+00', '2026-11-20 09:00:00.000001+00'];
    const made = await insertWebhooks(teamId, instants);
    await insertWebhooks(other.teamId, instants);
    // By hand: 19th; 20th .000000; .000001; then the two at .000002 by id.
    const tied = [made[0], made[2]].map((w) => (w as { id: string }).id).sort();
    const expected = [made[3]?.id, made[1]?.id, made[4]?.id, ...tied];
    expect((await walk(api, '/api/webhooks?limit=2')).map((page) => page.length)).toEqual([2, 2, 1]);
    expect((await walk(api, '/api/webhooks?limit=2')).flat()).toEqual(expected);
    expect((await walk(api, '/api/webhooks?limit=1')).flat()).toEqual(expected);
    // Without a limit: the whole list, no Link.
    const whole = await api.get('/api/webhooks').expect(200);
    expect(whole.headers.link).toBeUndefined();
    expect(whole.body.body.map((w: { id: string }) => w.id)).toEqual(expected);
  });

  it('refuses a bad limit, a foreign cursor and unknown parameters, naming them', async () => {
    const { api, teamId } = await newTeam();
    await insertWebhooks(teamId, ['2026-11-20 09:00:00+00', '2026-11-21 09:00:00+00']);
    const webhooksCursor = await cursorOf(api, '/api/webhooks');
    await h.db('job_roles').insert([{ team_id: teamId, name: 'a' }, { team_id: teamId, name: 'b' }]);
    const rolesCursor = await cursorOf(api, '/api/job-roles');
    for (const limit of ['0', '1001', '1.5', 'ten', '']) await expectInvalid(api, `/api/webhooks?limit=${limit}`, 'limit');
    for (const after of ['nonsense', rolesCursor]) await expectInvalid(api, `/api/webhooks?after=${after}`, 'after');
    await expectInvalid(api, '/api/webhooks?offset=1', 'offset');
    // A webhooks cursor is not a deliveries cursor either.
    const [hook] = (await api.get('/api/webhooks').expect(200)).body.body as { id: string }[];
    await expectInvalid(api, `/api/webhooks/${hook?.id}/deliveries?after=${webhooksCursor}`, 'after');
  });
});

describe('GET /api/webhooks/:id/deliveries', () => {
  it('pages newest attempt first, then by id, only the webhook\'s own', async () => {
    const { api, teamId } = await newTeam();
    const [hook, sibling] = await insertWebhooks(teamId, ['2026-11-20 09:00:00+00', '2026-11-20 09:00:01+00']);
    const other = await newTeam();
    const [theirs] = await insertWebhooks(other.teamId, ['2026-11-20 09:00:00+00']);
    const instants = ['2026-11-20 10:00:00+00', '2026-11-20 10:00:00.000001+00', '2026-11-20 10:00:00+00', '2026-11-20 11:00:00+00', '2026-11-20 10:00:00+00'];
    const attempt = (team: string, webhookId: string, at: string) => ({
      team_id: team,
      webhook_id: webhookId,
      delivery_id: randomUUID(),
      event_id: randomUUID(),
      event_type: 'project.changed',
      status_code: 500,
      error: null,
      duration_ms: 3,
      attempted_at: at,
      next_attempt_at: '2026-11-20 12:00:00+00',
    });
    const made: string[] = [];
    for (const at of instants) {
      made.push((await h.db('webhook_attempts').insert(attempt(teamId, hook?.id as string, at)).returning('id'))[0].id);
      await h.db('webhook_attempts').insert(attempt(teamId, sibling?.id as string, at));
      await h.db('webhook_attempts').insert(attempt(other.teamId, theirs?.id as string, at));
    }
    // By hand: 11:00; 10:00.000001; then the three at 10:00 by id.
    const expected = [made[3], made[1], ...[made[0], made[2], made[4]].sort()];
    const url = `/api/webhooks/${hook?.id}/deliveries`;
    const pages = await walk(api, `${url}?limit=2`);
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(expected);
    const whole = await api.get(url).expect(200);
    expect(whole.headers.link).toBeUndefined();
    expect(whole.body.body.map((a: { id: string }) => a.id)).toEqual(expected);
    for (const limit of ['0', '1001', 'x']) await expectInvalid(api, `${url}?limit=${limit}`, 'limit');
    // Another team's webhook stays a 404, with a cursor or without.
    await api.get(`/api/webhooks/${theirs?.id}/deliveries?limit=1`).expect(404);
  });
});
