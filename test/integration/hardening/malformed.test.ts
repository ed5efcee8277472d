import fc from 'fast-check';
import request from 'supertest';
import { Harness, documented, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime } from '../../support/fixtures';

/*
 * Generated malformed requests against every route: none may answer 5xx, and the team's stored data
 * must be exactly as before (compared by a digest of every table).
 */
let h: Harness;
let ids: Record<'project' | 'task' | 'member' | 'role' | 'log' | 'token', string>;

const TABLES = ['job_roles', 'team_members', 'projects', 'project_rate_cards', 'project_members', 'tasks', 'task_assignees', 'time_logs', 'task_member_time', 'task_labor', 'fixed_cost_history', 'api_tokens'];

async function digest(): Promise<string> {
  const parts = [];
  for (const table of TABLES) {
    const result = await h.db.raw(`select count(*) as n, coalesce(md5(string_agg(t::text, '|' order by t::text)), '') as d from ${table} t where team_id = ?`, [h.teamId]);
    parts.push(`${table}:${result.rows[0].n}:${result.rows[0].d}`);
  }
  return parts.join('\n');
}

beforeAll(async () => {
  h = await startHarness();
  const project = await createProject(h.api);
  const role = await createJobRole(h.api);
  const member = await createMember(h.api, { name: 'Fuzz' });
  await addToProject(h.api, project.id, member.id, role.id);
  const task = await createTask(h.api, project.id, { estimated_hours: 3, assignee_ids: [member.id], fixed_cost: 5 });
  const log = await logTime(h.api, task.id, member.id, { seconds: 60 });
  const token = (await h.api.post('/api/tokens', { name: 'fuzz', role: 'viewer' }).expect(201)).body.body;
  ids = { project: project.id, task: task.id, member: member.id, role: role.id, log: log.id, token: token.id };
});
afterAll(() => h.close());

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const ROUTES: [Method, string][] = [
  ['get', '/api/project-finance/task/{task}/breakdown'],
  ['get', '/api/project-finance/project/{project}/tasks'],
  ['get', '/api/project-finance/project/{project}/export'],
  ['put', '/api/project-finance/task/{task}/fixed-cost'],
  ['get', '/api/project-finance/task/{task}/fixed-cost/history'],
  ['post', '/api/job-roles'],
  ['get', '/api/job-roles'],
  ['post', '/api/team-members'],
  ['get', '/api/team-members'],
  ['get', '/api/team-members/{member}'],
  ['patch', '/api/team-members/{member}'],
  ['post', '/api/projects'],
  ['get', '/api/projects'],
  ['get', '/api/projects/{project}'],
  ['patch', '/api/projects/{project}'],
  ['put', '/api/projects/{project}/rate-card'],
  ['get', '/api/projects/{project}/rate-card'],
  ['get', '/api/projects/{project}/members'],
  ['put', '/api/projects/{project}/members/{member}'],
  ['delete', '/api/projects/{project}/members/{member}'],
  ['post', '/api/projects/{project}/tasks'],
  ['get', '/api/tasks/{task}'],
  ['patch', '/api/tasks/{task}'],
  ['delete', '/api/tasks/{task}'],
  ['post', '/api/tasks/{task}/time-logs'],
  ['get', '/api/tasks/{task}/time-logs'],
  ['delete', '/api/time-logs/{log}'],
  ['post', '/api/tokens'],
  ['get', '/api/tokens'],
  ['delete', '/api/tokens/{token}'],
  ['post', '/api/teams'],
];

const badId = fc.oneof(
  fc.constantFrom('x', '0', '..', '%00', 'null', '00000000-0000-0000-0000-00000000000', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', "' or 1=1 --", '%F0%9F%98%80', 'a'.repeat(300)),
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
);

/** A body that no route may accept: always has an unknown field, or is not an object, or is not JSON. */
const badBody = fc.oneof(
  // `extra` is never undefined: JSON drops a field whose value is undefined, and the unknown field with it
  // (an empty PATCH is valid, so `{}` once got through and changed a member's updated_at).
  fc.record({ kind: fc.constant('unknown field' as const), value: fc.dictionary(fc.string({ maxLength: 12 }), fc.anything(), { maxKeys: 4 }), extra: fc.anything().filter((v) => v !== undefined) }),
  fc.record({ kind: fc.constant('wrong types' as const), value: fc.dictionary(fc.constantFrom('name', 'fixed_cost', 'estimated_hours', 'hours', 'seconds', 'assignee_ids', 'roles', 'job_role_id', 'role', 'currency', 'budget', 'billable', 'parent_task_id', 'team_member_id', 'logged_at'), fc.oneof(fc.string(), fc.object(), fc.array(fc.anything()), fc.constant(null), fc.double(), fc.boolean()), { minKeys: 1, maxKeys: 5 }) }),
  fc.record({ kind: fc.constant('not an object' as const), value: fc.oneof(fc.array(fc.anything(), { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null), fc.boolean()) }),
  fc.record({
    kind: fc.constant('not JSON' as const),
    value: fc.string({ maxLength: 200 }).filter((text) => {
      try {
        const parsed: unknown = JSON.parse(text);
        return typeof parsed !== 'object' || parsed === null || Array.isArray(parsed);
      } catch {
        return true;
      }
    }),
    contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1'),
  }),
);

const requestArb = fc.record({
  route: fc.constantFrom(...ROUTES),
  ids: fc.constantFrom('valid', 'malformed'),
  badId,
  body: badBody,
  query: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 10 }), { maxKeys: 2 }),
});

it('answers every generated malformed request with a 4xx envelope and changes nothing', async () => {
  const before = await digest();
  await fc.assert(
    fc.asyncProperty(requestArb, async ({ route: [method, template], ids: mode, badId: bad, body, query }) => {
      // Bodies are always bad, and GETs change nothing; a DELETE has no body, so it always gets a bad id.
      const malformed = mode === 'malformed' || method === 'delete';
      const path = template.replace(/\{(\w+)\}/g, (_m, name: keyof typeof ids) => (malformed ? bad : ids[name]));
      let req = documented(request(h.app)[method](path).set('Authorization', `Bearer ${h.api.token}`).query(query));
      if (method !== 'get' && method !== 'delete') {
        // Objects always carry an unknown field: wrongly typed fields alone may happen to be valid.
        if (body.kind === 'unknown field') req = req.send({ ...body.value, 'x-unknown-field': body.extra });
        else if (body.kind === 'wrong types') req = req.send({ ...body.value, 'x-unknown-field': true });
        else if (body.kind === 'not JSON') req = req.set('Content-Type', body.contentType).send(body.value);
        else req = req.set('Content-Type', 'application/json').send(JSON.stringify(body.value ?? null));
      }
      const res = await req;
      expect({ path, status: res.status < 500 }).toEqual({ path, status: true });
      if (res.status >= 400) expect(res.body).toMatchObject({ success: false, error: { code: expect.any(String), message: expect.any(String) } });
    }),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
  );
  expect(await digest()).toBe(before);
});
