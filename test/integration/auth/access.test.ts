import { Writable } from 'node:stream';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { Api, Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime } from '../../support/fixtures';

let h: Harness;
const logLines: string[] = [];
let tokens: Record<'viewer' | 'editor' | 'admin' | 'revoked', string>;
let ids: { project: string; task: string; member: string; role: string; log: string; token: string };

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  h = await startHarness({ logger: createLogger('trace', sink) });
  const make = async (role: string) => (await h.api.post('/api/tokens', { name: `${role} token`, role }).expect(201)).body.body;
  const viewer = await make('viewer');
  const editor = await make('editor');
  const revoked = await make('viewer');
  await h.api.delete(`/api/tokens/${revoked.id}`).expect(200);
  tokens = { viewer: viewer.token, editor: editor.token, admin: h.api.token as string, revoked: revoked.token };

  const project = await createProject(h.api);
  const role = await createJobRole(h.api);
  const member = await createMember(h.api, { name: 'Matrix' });
  await addToProject(h.api, project.id, member.id, role.id);
  const task = await createTask(h.api, project.id, { assignee_ids: [member.id] });
  const log = await logTime(h.api, task.id, member.id, { seconds: 60 });
  ids = { project: project.id, task: task.id, member: member.id, role: role.id, log: log.id, token: viewer.id };
});
afterAll(() => h.close());

/** `operator`: an admin of the default team only (bootstrap.test.ts), so no token of this file's team. */
type Route = { method: 'get' | 'post' | 'put' | 'patch' | 'delete'; path: () => string; needs: 'viewer' | 'editor' | 'admin' | 'operator'; body?: () => unknown };

const ROUTES: Route[] = [
  { method: 'get', path: () => `/api/project-finance/task/${ids.task}/breakdown`, needs: 'viewer' },
  { method: 'get', path: () => `/api/project-finance/project/${ids.project}/tasks`, needs: 'viewer' },
  { method: 'get', path: () => `/api/project-finance/project/${ids.project}/export?format=xlsx`, needs: 'viewer' },
  { method: 'put', path: () => `/api/project-finance/task/${ids.task}/fixed-cost`, needs: 'editor', body: () => ({ fixed_cost: 1 }) },
  { method: 'get', path: () => `/api/project-finance/task/${ids.task}/fixed-cost/history`, needs: 'viewer' },
  { method: 'get', path: () => '/api/job-roles', needs: 'viewer' },
  { method: 'post', path: () => '/api/job-roles', needs: 'editor', body: () => ({ name: `Role ${Math.random()}` }) },
  { method: 'post', path: () => '/api/team-members', needs: 'editor', body: () => ({ name: 'New' }) },
  { method: 'get', path: () => `/api/team-members/${ids.member}`, needs: 'viewer' },
  { method: 'patch', path: () => `/api/team-members/${ids.member}`, needs: 'editor', body: () => ({ name: 'Matrix' }) },
  { method: 'post', path: () => '/api/projects', needs: 'editor', body: () => ({ name: `P ${Math.random()}` }) },
  { method: 'get', path: () => `/api/projects/${ids.project}`, needs: 'viewer' },
  { method: 'patch', path: () => `/api/projects/${ids.project}`, needs: 'editor', body: () => ({}) },
  { method: 'get', path: () => `/api/projects/${ids.project}/budget`, needs: 'viewer' },
  { method: 'get', path: () => `/api/projects/${ids.project}/rate-card`, needs: 'viewer' },
  { method: 'put', path: () => `/api/projects/${ids.project}/rate-card`, needs: 'admin', body: () => ({ roles: [] }) },
  { method: 'post', path: () => `/api/projects/${ids.project}/rate-card/preview`, needs: 'admin', body: () => ({ roles: [{ job_role_id: ids.role, hourly_rate: 5 }] }) },
  { method: 'get', path: () => `/api/projects/${ids.project}/rate-card/history`, needs: 'viewer' },
  { method: 'put', path: () => `/api/projects/${ids.project}/members/${ids.member}`, needs: 'admin', body: () => ({ job_role_id: ids.role }) },
  { method: 'get', path: () => `/api/projects/${ids.project}/members/${ids.member}/rates`, needs: 'viewer' },
  { method: 'put', path: () => `/api/projects/${ids.project}/members/${ids.member}/rates`, needs: 'admin', body: () => ({ hourly_rate: null }) },
  { method: 'delete', path: () => `/api/projects/${ids.project}/members/00000000-0000-4000-8000-00000000beef`, needs: 'admin' },
  { method: 'post', path: () => `/api/projects/${ids.project}/tasks`, needs: 'editor', body: () => ({ name: 'T' }) },
  { method: 'get', path: () => `/api/tasks/${ids.task}`, needs: 'viewer' },
  { method: 'patch', path: () => `/api/tasks/${ids.task}`, needs: 'editor', body: () => ({}) },
  { method: 'delete', path: () => '/api/tasks/00000000-0000-4000-8000-00000000beef', needs: 'editor' },
  { method: 'post', path: () => `/api/tasks/${ids.task}/time-logs`, needs: 'editor', body: () => ({ team_member_id: ids.member, seconds: 1 }) },
  { method: 'get', path: () => `/api/tasks/${ids.task}/time-logs`, needs: 'viewer' },
  { method: 'delete', path: () => '/api/time-logs/00000000-0000-4000-8000-00000000beef', needs: 'editor' },
  { method: 'get', path: () => '/api/tokens', needs: 'admin' },
  { method: 'post', path: () => '/api/tokens', needs: 'admin', body: () => ({ name: 'x', role: 'viewer' }) },
  { method: 'delete', path: () => '/api/tokens/00000000-0000-4000-8000-00000000beef', needs: 'admin' },
  { method: 'post', path: () => '/api/teams', needs: 'operator', body: () => ({ name: 'Another team' }) },
];

const RANK = { viewer: 0, editor: 1, admin: 2, operator: 3 } as const;

function send(api: Api, route: Route) {
  const req = api[route.method](route.path());
  return route.body ? req.send(route.body() as object) : req;
}

describe('access matrix: every route x {no token, bad token, revoked, viewer, editor, admin}', () => {
  // Labelled by the source of each path, e.g. GET /api/tasks/${ids.task}.
  const label = (r: Route) => `${r.method.toUpperCase()} ${r.path.toString().replace(/^\(\) => [`']|[`']$/g, '')}`;
  it.each(ROUTES.map((r) => [label(r), r] as const))('%s', async (_name, route) => {
    const none = await send(h.api.as(undefined), route);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
    expect((await send(h.api.as('pft_not-a-real-token'), route)).status).toBe(401);
    expect((await send(h.api.as(tokens.revoked), route)).status).toBe(401);
    for (const role of ['viewer', 'editor', 'admin'] as const) {
      const res = await send(h.api.as(tokens[role]), route);
      if (RANK[role] >= RANK[route.needs]) {
        expect({ role, allowed: ![401, 403].includes(res.status), fault: res.status >= 500 }).toEqual({ role, allowed: true, fault: false });
      } else {
        expect({ role, status: res.status }).toEqual({ role, status: 403 });
        expect(res.body.error.code).toBe('FORBIDDEN');
      }
    }
  });

  it('refuses malformed Authorization headers', async () => {
    for (const header of ['Basic abc', 'Bearer', `Token ${tokens.admin}`, `Bearer ${tokens.admin} extra`]) {
      await h.api.as(undefined).get('/api/job-roles').set('Authorization', header).expect(401);
    }
  });
});

describe('tokens', () => {
  it('shows the secret once, lists without secrets, and revokes at once', async () => {
    const created = await h.api.post('/api/tokens', { name: 'ci', role: 'viewer' }).expect(201);
    expect(created.body.body).toEqual({ id: expect.any(String), name: 'ci', role: 'viewer', token: expect.stringMatching(/^pft_/), created_at: expect.any(String), revoked_at: null, expires_at: null, last_used_at: null });
    const secret = created.body.body.token;
    await h.api.as(secret).get('/api/job-roles').expect(200);
    const listed = await h.api.get('/api/tokens').expect(200);
    expect(listed.text).not.toContain(secret);
    expect(listed.body.body.find((t: { id: string }) => t.id === created.body.body.id)).toMatchObject({ name: 'ci', role: 'viewer' });
    await h.api.delete(`/api/tokens/${created.body.body.id}`).expect(200);
    await h.api.as(secret).get('/api/job-roles').expect(401);
    await h.api.post('/api/tokens', { name: 'x', role: 'owner' }).expect(400);
  });
});

describe('tenancy', () => {
  it('gives every route of another team 404 and never mixes lists', async () => {
    // Made as the operator would (POST /api/teams is the default team's: bootstrap.test.ts).
    const other = await createTeamWithAdmin(h.db, 'Rivals');
    const rival = h.api.as(other.token);
    // Look-alike data in the rival team.
    const rivalProject = await createProject(rival, { name: 'Look-alike' });
    await createJobRole(rival, 'Look-alike role');
    await createMember(rival, { name: 'Matrix' });

    const foreign: [Route['method'], string, unknown?][] = [
      ['get', `/api/project-finance/task/${ids.task}/breakdown`],
      ['get', `/api/project-finance/project/${ids.project}/tasks`],
      ['get', `/api/project-finance/project/${ids.project}/export`],
      ['put', `/api/project-finance/task/${ids.task}/fixed-cost`, { fixed_cost: 1 }],
      ['get', `/api/project-finance/task/${ids.task}/fixed-cost/history`],
      ['get', `/api/team-members/${ids.member}`],
      ['patch', `/api/team-members/${ids.member}`, { name: 'Stolen' }],
      ['get', `/api/projects/${ids.project}`],
      ['patch', `/api/projects/${ids.project}`, { name: 'Stolen' }],
      ['get', `/api/projects/${ids.project}/rate-card`],
      ['put', `/api/projects/${ids.project}/rate-card`, { roles: [] }],
      ['post', `/api/projects/${ids.project}/rate-card/preview`, { roles: [] }],
      ['get', `/api/projects/${ids.project}/rate-card/history`],
      ['get', `/api/projects/${ids.project}/members`],
      ['put', `/api/projects/${ids.project}/members/${ids.member}`, { job_role_id: null }],
      ['delete', `/api/projects/${ids.project}/members/${ids.member}`],
      ['post', `/api/projects/${ids.project}/tasks`, { name: 'T' }],
      ['get', `/api/tasks/${ids.task}`],
      ['patch', `/api/tasks/${ids.task}`, { name: 'Stolen' }],
      ['delete', `/api/tasks/${ids.task}`],
      ['post', `/api/tasks/${ids.task}/time-logs`, { team_member_id: ids.member, seconds: 60 }],
      ['get', `/api/tasks/${ids.task}/time-logs`],
      ['delete', `/api/time-logs/${ids.log}`],
      ['delete', `/api/tokens/${ids.token}`],
    ];
    for (const [method, url, body] of foreign) {
      const req = rival[method](url);
      const res = await (body ? req.send(body as object) : req);
      expect({ url, method, status: res.status }).toEqual({ url, method, status: 404 });
    }
    // Rival ids referenced in bodies are unknown here too.
    const rivalMember = await createMember(rival, { name: 'Rival' });
    await h.api.put(`/api/projects/${ids.project}/members/${rivalMember.id}`, { job_role_id: null }).expect(404);
    await h.api.post(`/api/tasks/${ids.task}/time-logs`, { team_member_id: rivalMember.id, seconds: 60 }).expect(400);
    await h.api.get(`/api/project-finance/project/${rivalProject.id}/tasks`).expect(404);
    await h.api.post(`/api/projects/${rivalProject.id}/rate-card/preview`, { roles: [] }).expect(404);
    await h.api.get(`/api/projects/${rivalProject.id}/rate-card/history`).expect(404);

    const names = async (api: Api, url: string) => (await api.get(url).expect(200)).body.body.map((x: { name: string }) => x.name);
    expect(await names(rival, '/api/projects')).toEqual(['Look-alike']);
    expect(await names(rival, '/api/job-roles')).toEqual(['Look-alike role']);
    expect((await names(rival, '/api/team-members')).sort()).toEqual(['Matrix', 'Rival']);
    expect(await names(h.api, '/api/projects')).not.toContain('Look-alike');
    expect(await names(rival, '/api/tokens')).toEqual(['Rivals admin']);
    // Nothing of ours changed.
    expect((await h.api.get(`/api/tasks/${ids.task}`).expect(200)).body.body.name).not.toBe('Stolen');
  });
});

describe('bodies that name another team\'s ids', () => {
  /*
   * A job role of another team in a rate card (the PUT and its preview) and a task of another team as
   * parent_task_id (a new task, a moved one) are answered exactly as an id that exists nowhere: a 4xx
   * with the same status and code, and nothing written in either team.
   */
  it('answers them as unknown ids and writes nothing', async () => {
    const other = await createTeamWithAdmin(h.db, 'Rivals of bodies');
    const rival = h.api.as(other.token);
    const rivalRole = await createJobRole(rival, 'Rival role');
    const rivalProject = await createProject(rival);
    const rivalTask = await createTask(rival, rivalProject.id, { name: 'Rival parent' });
    const nowhere = '00000000-0000-4000-8000-00000000dead';

    const rows = async () => {
      const count = async (table: string) => Number((await h.db(table).whereIn('team_id', [h.teamId, other.team.id]).count({ n: '*' }))[0]?.n);
      return { cards: await count('project_rate_cards'), tasks: await count('tasks'), parents: await h.db('tasks').whereIn('team_id', [h.teamId, other.team.id]).orderBy('id').select('id', 'parent_task_id') };
    };
    const before = await rows();
    const answer = async (method: 'put' | 'post' | 'patch', url: string, body: unknown) => {
      const res = await h.api[method](url, body);
      return { status: res.status, code: res.body?.error?.code };
    };
    const cases: [string, 'put' | 'post' | 'patch', string, (id: string) => unknown, string][] = [
      ['rate card', 'put', `/api/projects/${ids.project}/rate-card`, (id) => ({ roles: [{ job_role_id: id, hourly_rate: 10 }] }), rivalRole.id],
      ['rate-card preview', 'post', `/api/projects/${ids.project}/rate-card/preview`, (id) => ({ roles: [{ job_role_id: id, hourly_rate: 10 }] }), rivalRole.id],
      ['new task', 'post', `/api/projects/${ids.project}/tasks`, (id) => ({ name: 'Child of a rival', parent_task_id: id }), rivalTask.id],
      ['moved task', 'patch', `/api/tasks/${ids.task}`, (id) => ({ parent_task_id: id }), rivalTask.id],
    ];
    for (const [what, method, url, body, rivalId] of cases) {
      const unknown = await answer(method, url, body(nowhere));
      const foreign = await answer(method, url, body(rivalId));
      expect({ what, unknownIsRefused: unknown.status >= 400 && unknown.status < 500 }).toEqual({ what, unknownIsRefused: true });
      expect({ what, foreign }).toEqual({ what, foreign: unknown });
    }
    expect(await rows()).toEqual(before);
  });
});

describe('logs', () => {
  it('never contain a token, even for failed or token-creating requests', async () => {
    await h.api.as('pft_secret-looking-but-invalid').get('/api/job-roles').expect(401);
    const created = await h.api.post('/api/tokens', { name: 'logged?', role: 'editor' }).expect(201);
    await h.api.as(created.body.body.token).get('/api/project-finance/task/nope/breakdown').expect(400);
    const all = logLines.join('');
    expect(logLines.length).toBeGreaterThan(10);
    expect(all).toContain('"statusCode":401');
    for (const secret of [...Object.values(tokens), created.body.body.token, 'pft_secret-looking-but-invalid']) {
      expect(all).not.toContain(secret);
    }
    expect(all.toLowerCase()).not.toContain('bearer');
  });
});
