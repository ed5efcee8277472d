import { randomUUID } from 'node:crypto';
import { buildOpenApiDocument } from '../../../src/openapi/document';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { Api, Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime } from '../../support/fixtures';

/*
 * Every list route answers pages (docs/api.md, "Pagination"): at most `limit` rows, the next page
 * announced in `Link: <url>; rel="next"`. Each test walks a list of a team of its own by following
 * the Link headers and checks the rows against the order worked out by hand, each row once, no Link
 * on the last page; a second team's rows, made alike, never show.
 */

let h: Harness;
/** Cursors of other lists (of the harness's team), which no list takes for its own. */
let projectsCursor: string;
let jobRolesCursor: string;
beforeAll(async () => {
  h = await startHarness();
  for (const name of ['one', 'two']) {
    await createProject(h.api, { name });
    await createJobRole(h.api, name);
  }
  projectsCursor = await cursorOf(h.api, '/api/projects');
  jobRolesCursor = await cursorOf(h.api, '/api/job-roles');
});
afterAll(() => h.close());

/** An admin of a new, empty team. */
async function newTeam(): Promise<Api> {
  const { token } = await createTeamWithAdmin(h.db, `paging ${randomUUID()}`);
  return h.api.as(token);
}

const NEXT = /^<([^>]+)>; rel="next"$/;

/** The pages of a list from `url`, following each Link header; `rowsOf` picks a page's rows out of its body. */
async function walk<Row>(api: Api, url: string, rowsOf: (body: unknown) => Row[] = (body) => body as Row[]): Promise<{ pages: Row[][]; links: string[] }> {
  const pages: Row[][] = [];
  const links: string[] = [];
  let next: string | undefined = url;
  while (next) {
    const res = await api.get(next).expect(200);
    pages.push(rowsOf(res.body.body));
    const link = res.headers.link as string | undefined;
    if (link === undefined) break;
    const match = NEXT.exec(link);
    if (!match?.[1]) throw new Error(`not a next link: ${link}`);
    links.push(match[1]);
    next = match[1];
    if (pages.length > 50) throw new Error('the pages never end');
  }
  return { pages, links };
}

/** Walks `url` with limit 2 and expects `expected` (ids in order) in pages of 2, each link keeping the path and limit. */
async function expectPages<Row>(api: Api, url: string, idOf: (row: Row) => string, expected: string[], rowsOf?: (body: unknown) => Row[]) {
  const sep = url.includes('?') ? '&' : '?';
  const { pages, links } = await walk(api, `${url}${sep}limit=2`, rowsOf);
  const ids = pages.flat().map(idOf);
  expect(ids).toEqual(expected);
  expect(new Set(ids).size).toBe(ids.length);
  expect(pages.map((page) => page.length)).toEqual(expected.map((_id, i) => i).filter((i) => i % 2 === 0).map((i) => Math.min(2, expected.length - i)));
  for (const link of links) {
    const target = new URL(link, 'http://service.example');
    expect(target.pathname).toBe(url.split('?')[0]);
    expect(target.searchParams.get('limit')).toBe('2');
    expect(target.searchParams.get('after')).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]+$/));
  }
  // The default page is the whole list here (no Link), in the same order.
  const whole = await api.get(url).expect(200);
  expect(whole.headers.link).toBeUndefined();
  expect((rowsOf ? rowsOf(whole.body.body) : (whole.body.body as Row[])).map(idOf)).toEqual(expected);
}

/** Expects a 400 VALIDATION_ERROR whose details name `path`. */
async function expectInvalid(api: Api, url: string, path: string) {
  const res = await api.get(url);
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  expect(res.body.error.details?.map((d: { path: string }) => d.path)).toContain(path);
}

/** A cursor from a page of `url` (a list with more than one row). */
async function cursorOf(api: Api, url: string): Promise<string> {
  const res = await api.get(`${url}${url.includes('?') ? '&' : '?'}limit=1`).expect(200);
  const after = new URL(NEXT.exec(res.headers.link as string)?.[1] ?? '/', 'http://x').searchParams.get('after');
  if (!after) throw new Error(`${url} has no second page`);
  return after;
}

/** Bad limits and cursors of a list route are 400s naming the parameter. */
async function expectBadPagesRefused(api: Api, url: string, foreignCursor: string) {
  const sep = url.includes('?') ? '&' : '?';
  for (const limit of ['0', '1001', '-1', '1.5', 'ten', '', '1e2']) await expectInvalid(api, `${url}${sep}limit=${limit}`, 'limit');
  await expectInvalid(api, `${url}${sep}limit=1&limit=2`, 'limit');
  const garbage = ['nonsense', '', '!!!', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url'), 'x'.repeat(5000)];
  for (const after of [...garbage, foreignCursor]) await expectInvalid(api, `${url}${sep}after=${after}`, 'after');
  await expectInvalid(api, `${url}${sep}offset=2`, 'offset');
}

describe('GET /api/projects', () => {
  it('pages by name, then id, following Link; never another team\'s projects', async () => {
    const api = await newTeam();
    const other = await newTeam();
    const ids: Record<string, string> = {};
    const otherIds: Record<string, string> = {};
    for (const name of ['kiwi', 'apple', 'mango', 'banana', 'fig']) {
      ids[name] = (await createProject(api, { name })).id;
      otherIds[name] = (await createProject(other, { name })).id;
    }
    await expectPages<{ id: string }>(api, '/api/projects', (p) => p.id, ['apple', 'banana', 'fig', 'kiwi', 'mango'].map((name) => ids[name] as string));
    // A cursor of one team (after our apple), handed to another, pages that team's own projects only:
    // their apple too when its id comes after ours.
    const cursor = await cursorOf(api, '/api/projects');
    const theirs = (await other.get(`/api/projects?after=${cursor}`).expect(200)).body.body as { id: string; name: string }[];
    const theirApple = (otherIds.apple as string) > (ids.apple as string) ? ['apple'] : [];
    expect(theirs.map((p) => p.id)).toEqual([...theirApple, 'banana', 'fig', 'kiwi', 'mango'].map((name) => otherIds[name]));
    await expectBadPagesRefused(api, '/api/projects', jobRolesCursor);
  });

  it('keeps every row exactly once when rows are added behind and ahead of the cursor', async () => {
    const api = await newTeam();
    for (const name of ['b', 'd', 'f']) await createProject(api, { name });
    const first = await api.get('/api/projects?limit=2').expect(200);
    expect(first.body.body.map((p: { name: string }) => p.name)).toEqual(['b', 'd']);
    // 'a' sorts before the cursor (never shows on a later page), 'e' after it (shows on the next).
    await createProject(api, { name: 'a' });
    await createProject(api, { name: 'e' });
    const { pages } = await walk<{ name: string }>(api, NEXT.exec(first.headers.link as string)?.[1] as string);
    expect(pages.flat().map((p) => p.name)).toEqual(['e', 'f']);
  });
});

describe('GET /api/team-members', () => {
  it('pages by name, then id (members may share a name)', async () => {
    const api = await newTeam();
    const other = await newTeam();
    const made: { id: string; name: string }[] = [];
    for (const name of ['Zoe', 'Ann', 'Max', 'Ann', 'Max', 'Ann']) {
      made.push(await createMember(api, { name }));
      await createMember(other, { name });
    }
    // By name, then by id (lower-case hex: string order is the uuid order).
    const expected = [...made].sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1)).map((m) => m.id);
    await expectPages<{ id: string }>(api, '/api/team-members', (m) => m.id, expected);
    await expectBadPagesRefused(api, '/api/team-members', projectsCursor);
  });
});

describe('GET /api/job-roles', () => {
  it('pages by name', async () => {
    const api = await newTeam();
    const other = await newTeam();
    const ids: Record<string, string> = {};
    for (const name of ['QA', 'Dev', 'PM', 'Ops', 'Design']) {
      ids[name] = (await createJobRole(api, name)).id;
      await createJobRole(other, name);
    }
    await expectPages<{ id: string }>(api, '/api/job-roles', (r) => r.id, ['Design', 'Dev', 'Ops', 'PM', 'QA'].map((name) => ids[name] as string));
    await expectBadPagesRefused(api, '/api/job-roles', projectsCursor);
  });
});

describe('GET /api/tokens', () => {
  it('pages in creation order, the team admin first', async () => {
    const api = await newTeam();
    const other = await newTeam();
    const admin = ((await api.get('/api/tokens').expect(200)).body.body as { id: string }[]).map((t) => t.id);
    expect(admin).toHaveLength(1);
    const made: string[] = [];
    for (const name of ['ci', 'screen', 'backup', 'audit']) {
      made.push((await api.post('/api/tokens', { name, role: 'viewer' }).expect(201)).body.body.id);
      await other.post('/api/tokens', { name, role: 'viewer' }).expect(201);
    }
    await expectPages<{ id: string }>(api, '/api/tokens', (t) => t.id, [...admin, ...made]);
    await expectBadPagesRefused(api, '/api/tokens', projectsCursor);
  });
});

describe('GET /api/tasks/:id/time-logs', () => {
  it('pages newest logged_at first, then id, even among logs of the same instant', async () => {
    const api = await newTeam();
    const project = await createProject(api);
    const member = await createMember(api, { name: 'Logger' });
    const task = await createTask(api, project.id);
    const other = await newTeam();
    const theirs = await createTask(other, (await createProject(other)).id);
    const theirMember = await createMember(other, { name: 'Them' });
    const made: { id: string; at: string }[] = [];
    for (const at of ['2026-11-20T09:00:00Z', '2026-11-21T09:00:00Z', '2026-11-20T09:00:00Z', '2026-11-19T09:00:00Z', '2026-11-20T09:00:00Z', '2026-11-21T10:00:00+01:00']) {
      made.push({ id: (await logTime(api, task.id, member.id, { seconds: 60, logged_at: at })).id, at: new Date(at).toISOString() });
      await logTime(other, theirs.id, theirMember.id, { seconds: 60, logged_at: at });
    }
    const expected = [...made].sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at > b.at ? -1 : 1)).map((log) => log.id);
    const url = `/api/tasks/${task.id}/time-logs`;
    await expectPages<{ id: string }>(api, url, (log) => log.id, expected);
    await expectBadPagesRefused(api, url, projectsCursor);
    // Another team's task stays a 404, cursor or not.
    await api.get(`/api/tasks/${theirs.id}/time-logs?limit=2`).expect(404);
  });

  it('keeps microseconds in its cursor: logs a microsecond apart are neither skipped nor repeated', async () => {
    const api = await newTeam();
    const project = await createProject(api);
    const member = await createMember(api, { name: 'Logger' });
    const task = await createTask(api, project.id);
    // Instants a microsecond apart, written straight to the table (the API takes milliseconds).
    const ids: string[] = [];
    for (const micros of ['000003', '000002', '000001']) {
      const [row] = await h
        .db('time_logs')
        .insert({ team_id: await teamOf(api), task_id: task.id, team_member_id: member.id, seconds: 1, logged_at: `2026-11-20 09:00:00.${micros}+00` })
        .returning('id');
      ids.push(row.id);
    }
    const { pages } = await walk<{ id: string }>(api, `/api/tasks/${task.id}/time-logs?limit=1`);
    expect(pages.flat().map((log) => log.id)).toEqual(ids);
  });
});

async function teamOf(api: Api): Promise<string> {
  return (await api.get('/api/session').expect(200)).body.body.team.id;
}

describe('GET /api/project-finance/task/:task_id/fixed-cost/history', () => {
  it('pages newest change first', async () => {
    const api = await newTeam();
    const project = await createProject(api);
    const task = await createTask(api, project.id);
    const other = await newTeam();
    const theirs = await createTask(other, (await createProject(other)).id);
    for (const cost of [10, 20, 30, 40, 50]) {
      await api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: cost }).expect(200);
      await other.put(`/api/project-finance/task/${theirs.id}/fixed-cost`, { fixed_cost: cost + 1 }).expect(200);
    }
    const url = `/api/project-finance/task/${task.id}/fixed-cost/history`;
    const history = (await api.get(url).expect(200)).body.body as { id: string; old_value: number; new_value: number }[];
    expect(history.map((c) => [c.old_value, c.new_value])).toEqual([[40, 50], [30, 40], [20, 30], [10, 20], [0, 10]]);
    await expectPages<{ id: string }>(api, url, (c) => c.id, history.map((c) => c.id));
    await expectBadPagesRefused(api, url, projectsCursor);
  });
});

describe('GET /api/projects/:id/rate-card/history', () => {
  it('pages the entries by effective_from, then role name, the body keeping its shape', async () => {
    const api = await newTeam();
    const other = await newTeam();
    const project = await createProject(api);
    const theirProject = await createProject(other);
    const qa = await createJobRole(api, 'QA');
    const dev = await createJobRole(api, 'Dev');
    const ops = await createJobRole(api, 'Ops');
    const theirRole = await createJobRole(other, 'Dev');
    const card = (roles: { job_role_id: string; hourly_rate: number }[], effective_from: string) =>
      api.put(`/api/projects/${project.id}/rate-card`, { roles, effective_from }).expect(200);
    await card([{ job_role_id: qa.id, hourly_rate: 50 }, { job_role_id: dev.id, hourly_rate: 100 }, { job_role_id: ops.id, hourly_rate: 70 }], '2026-01-01');
    // From March, Ops has no rate (a null entry) and the others are raised.
    await card([{ job_role_id: dev.id, hourly_rate: 110 }, { job_role_id: qa.id, hourly_rate: 55 }], '2026-03-01');
    await other.put(`/api/projects/${theirProject.id}/rate-card`, { roles: [{ job_role_id: theirRole.id, hourly_rate: 1 }], effective_from: '2026-02-01' }).expect(200);
    type Entry = { job_role_name: string; effective_from: string; hourly_rate: number | null };
    const url = `/api/projects/${project.id}/rate-card/history`;
    const key = (e: Entry) => `${e.effective_from} ${e.job_role_name} ${e.hourly_rate}`;
    const entriesOf = (body: unknown) => {
      expect(body).toMatchObject({ project_id: project.id, currency: 'USD' });
      return (body as { entries: Entry[] }).entries;
    };
    await expectPages<Entry>(
      api,
      url,
      key,
      ['2026-01-01 Dev 100', '2026-01-01 Ops 70', '2026-01-01 QA 50', '2026-03-01 Dev 110', '2026-03-01 Ops null', '2026-03-01 QA 55'],
      entriesOf,
    );
    await expectBadPagesRefused(api, url, projectsCursor);
    await api.get(`/api/projects/${theirProject.id}/rate-card/history?limit=1`).expect(404);
  });
});

describe('GET /api/projects/:id/members', () => {
  it('pages by name, then member id', async () => {
    const api = await newTeam();
    const project = await createProject(api);
    const made: { id: string; name: string }[] = [];
    for (const name of ['Yan', 'Bea', 'Kit', 'Bea', 'Al']) {
      const member = await createMember(api, { name });
      await addToProject(api, project.id, member.id, null);
      made.push(member);
    }
    const expected = [...made].sort((a, b) => (a.name === b.name ? (a.id < b.id ? -1 : 1) : a.name < b.name ? -1 : 1)).map((m) => m.id);
    const url = `/api/projects/${project.id}/members`;
    await expectPages<{ team_member_id: string }>(api, url, (m) => m.team_member_id, expected);
    await expectBadPagesRefused(api, url, projectsCursor);
  });
});

describe('the default and largest page', () => {
  it('answers at most 1,000 rows without a limit, and announces the rest', async () => {
    const api = await newTeam();
    const teamId = await teamOf(api);
    // 1,001 job roles written at once (through the API this would take minutes).
    const names = Array.from({ length: 1001 }, (_v, i) => `role ${String(i).padStart(4, '0')}`);
    await h.db('job_roles').insert(names.map((name) => ({ team_id: teamId, name })));
    const first = await api.get('/api/job-roles').expect(200);
    expect(first.body.body).toHaveLength(1000);
    expect(first.body.body[999].name).toBe('role 0999');
    const next = NEXT.exec(first.headers.link as string)?.[1] as string;
    expect(new URL(next, 'http://x').searchParams.get('limit')).toBeNull();
    const last = await api.get(next).expect(200);
    expect(last.body.body.map((r: { name: string }) => r.name)).toEqual(['role 1000']);
    expect(last.headers.link).toBeUndefined();
    expect((await api.get('/api/job-roles?limit=1000').expect(200)).body.body).toHaveLength(1000);
  });
});

describe('the OpenAPI document', () => {
  it('gives every list route limit and after, and the Link header of its 200', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { parameters: { name: string; in: string }[]; responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    const lists = [
      '/api/projects',
      '/api/team-members',
      '/api/job-roles',
      '/api/tokens',
      '/api/tasks/{id}/time-logs',
      '/api/projects/{id}/members',
      '/api/projects/{id}/rate-card/history',
      '/api/project-finance/task/{task_id}/fixed-cost/history',
      '/api/webhooks',
      '/api/webhooks/{id}/deliveries',
    ];
    for (const path of lists) {
      const op = doc.paths[path]?.get;
      expect({ path, query: op?.parameters.filter((p) => p.in === 'query').map((p) => p.name) }).toEqual({ path, query: ['limit', 'after'] });
      expect({ path, link: Boolean(op?.responses['200']?.headers?.Link) }).toEqual({ path, link: true });
      expect({ path, has400: Boolean(op?.responses['400']) }).toEqual({ path, has400: true });
    }
  });
});
