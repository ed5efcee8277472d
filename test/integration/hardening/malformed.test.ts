import fc from 'fast-check';
import type { Server } from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import request from 'supertest';
import { errorHandler } from '../../../src/http/error-handler';
import { createLogger } from '../../../src/logger';
import { Harness, documented, startHarness } from '../../support/harness';
import { DEFAULT_TEAM_ID, ensureDefaultTeam } from '../../../src/teams/teams.service';
import { createToken } from '../../../src/auth/tokens.service';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime } from '../../support/fixtures';

/*
 * Generated malformed requests against every route: every write (any method but GET) and every request
 * with a malformed id answers 4xx, none 5xx, and the stored data of every team (not only the harness's:
 * an accepted malformed POST /api/teams would make a new one) must be exactly as before, compared by a
 * digest of every row of every table. The file has a database of its own, so other files' writes stay out.
 */
let h: Harness;
/** Every log line the app writes, to check that malformed input logs no 500 and no query string. */
const logLines: string[] = [];
const logSink = new Writable({
  write(chunk, _encoding, done) {
    logLines.push(String(chunk));
    done();
  },
});
let ids: Record<'project' | 'task' | 'member' | 'role' | 'log' | 'token', string>;

/**
 * Every row of every table of the database, whichever team it belongs to, as a count and a hash per
 * table. A token's last_used_at is left out: using a token is a read's bookkeeping, not data it changes.
 */
async function digest(): Promise<string> {
  const tables: { tablename: string }[] = (await h.db.raw("select tablename from pg_tables where schemaname = current_schema() order by tablename")).rows;
  expect(tables.map((t) => t.tablename)).toEqual(expect.arrayContaining(['teams', 'api_tokens', 'projects', 'tasks', 'time_logs', 'task_labor']));
  const parts = [];
  // api_token_usage holds only when each token was last used: a read's bookkeeping, not data it changes.
  for (const { tablename } of tables.filter((t) => t.tablename !== 'api_token_usage')) {
    const row = `(to_jsonb(t) - 'last_used_at')::text`;
    const result = await h.db.raw(`select count(*) as n, coalesce(md5(string_agg(${row}, '|' order by ${row})), '') as d from "${tablename}" t`);
    parts.push(`${tablename}:${result.rows[0].n}:${result.rows[0].d}`);
  }
  return parts.join('\n');
}

let operatorToken: string;
beforeAll(async () => {
  h = await startHarness({ logger: createLogger('info', logSink), ownDatabase: true });
  const project = await createProject(h.api);
  const role = await createJobRole(h.api);
  const member = await createMember(h.api, { name: 'Fuzz' });
  await addToProject(h.api, project.id, member.id, role.id);
  const task = await createTask(h.api, project.id, { estimated_hours: 3, assignee_ids: [member.id], fixed_cost: 5 });
  const log = await logTime(h.api, task.id, member.id, { seconds: 60 });
  const token = (await h.api.post('/api/tokens', { name: 'fuzz', role: 'viewer' }).expect(201)).body.body;
  ids = { project: project.id, task: task.id, member: member.id, role: role.id, log: log.id, token: token.id };
  // POST /api/teams is the operator's (the default team's admin): fuzzed with such a token, so its bodies are checked.
  await ensureDefaultTeam(h.db);
  operatorToken = (await createToken(h.db, DEFAULT_TEAM_ID, 'fuzz operator', 'admin')).token;
  // Stored figures are derived data brought current by reads (src/finance/read-model/freshness.ts): bring them
  // current now, so the digest compares the inputs and what a valid read would have stored anyway.
  await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
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
  ['post', '/api/projects/{project}/rate-card/preview'],
  ['get', '/api/projects/{project}/rate-card/history'],
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

/** A valid body of each write, which a typo or a field of its own (team_id, id) makes malformed. */
const VALID_BODIES: Record<string, () => Record<string, unknown>> = {
  'put /api/project-finance/task/{task}/fixed-cost': () => ({ fixed_cost: 1 }),
  'post /api/job-roles': () => ({ name: 'Fuzz role' }),
  'post /api/team-members': () => ({ name: 'Fuzz member' }),
  'patch /api/team-members/{member}': () => ({ name: 'Fuzz renamed' }),
  'post /api/projects': () => ({ name: 'Fuzz project' }),
  'patch /api/projects/{project}': () => ({ name: 'Fuzz project renamed' }),
  'put /api/projects/{project}/rate-card': () => ({ roles: [{ job_role_id: ids.role, hourly_rate: 1 }] }),
  'post /api/projects/{project}/rate-card/preview': () => ({ roles: [{ job_role_id: ids.role, hourly_rate: 1 }] }),
  'put /api/projects/{project}/members/{member}': () => ({ job_role_id: null }),
  'post /api/projects/{project}/tasks': () => ({ name: 'Fuzz task' }),
  'patch /api/tasks/{task}': () => ({ name: 'Fuzz task renamed' }),
  'post /api/tasks/{task}/time-logs': () => ({ team_member_id: ids.member, seconds: 60 }),
  'post /api/tokens': () => ({ name: 'fuzz', role: 'viewer' }),
  'post /api/teams': () => ({ name: 'Fuzz team' }),
};

const badId = fc.oneof(
  fc.constantFrom('x', '0', '..', '%00', 'null', '00000000-0000-0000-0000-00000000000', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', "' or 1=1 --", '%F0%9F%98%80', 'a'.repeat(300)),
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
);

/** A body that no route may accept: always has an unknown field, or is not an object, or is not JSON. */
const badBody = fc.oneof(
  fc.record({ kind: fc.constant('valid but one field' as const), field: fc.constantFrom('team_id', 'id', 'Name', 'fixedCost', 'x-unknown-field'), extra: fc.jsonValue() }),
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
  const writes = ROUTES.filter(([method]) => method !== 'get' && method !== 'delete').map(([method, template]) => `${method} ${template}`);
  expect(writes.filter((key) => !VALID_BODIES[key])).toEqual([]);
  const before = await digest();
  await fc.assert(
    fc.asyncProperty(requestArb, async ({ route: [method, template], ids: mode, badId: bad, body, query }) => {
      // Bodies are always bad, and GETs change nothing; a DELETE has no body, so it always gets a bad id.
      const malformed = mode === 'malformed' || method === 'delete';
      const path = template.replace(/\{(\w+)\}/g, (_m, name: keyof typeof ids) => (malformed ? bad : ids[name]));
      const token = template === '/api/teams' ? operatorToken : h.api.token;
      let req = documented(request(h.app)[method](path).set('Authorization', `Bearer ${token}`).query(query));
      if (method !== 'get' && method !== 'delete') {
        // Objects always carry an unknown field: wrongly typed fields alone may happen to be valid.
        if (body.kind === 'valid but one field') req = req.send({ ...(VALID_BODIES[`${method} ${template}`]?.() ?? {}), [body.field]: body.extra });
        else if (body.kind === 'unknown field') req = req.send({ ...body.value, 'x-unknown-field': body.extra });
        else if (body.kind === 'wrong types') req = req.send({ ...body.value, 'x-unknown-field': true });
        else if (body.kind === 'not JSON') req = req.set('Content-Type', body.contentType).send(body.value);
        else req = req.set('Content-Type', 'application/json').send(JSON.stringify(body.value ?? null));
      }
      const res = await req;
      // A GET of valid ids (or of none) may answer 200 (unknown query parameters are a 400 on some routes only).
      const clientError = method !== 'get' || (malformed && template.includes('{'));
      expect({ method, path, status: clientError ? res.status >= 400 && res.status <= 499 : res.status < 500 }).toEqual({ method, path, status: true });
      if (res.status >= 400) expect(res.body).toMatchObject({ success: false, error: { code: expect.any(String), message: expect.any(String) } });
    }),
    { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
  );
  expect(await digest()).toBe(before);
});

/*
 * Requests supertest cannot express (a path that is not valid percent-encoding, a body cut short)
 * are written byte for byte on a socket; the answer is read until the server closes the connection.
 */
describe('requests written on a raw socket', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = h.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  type Answer = { status: number; body: unknown; raw: string };
  /** Sends `head` (request line and headers, without the blank line) and `body`; `cut` stops the client mid-body. */
  function send(head: string, body: Buffer = Buffer.alloc(0), cut?: 'half-close' | 'destroy'): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
        const text = raw.slice(raw.indexOf('\r\n\r\n') + 4);
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON: kept as text
        }
        resolve({ status, body: parsed, raw });
      });
      socket.once('connect', () => {
        socket.write(`${head}\r\nHost: localhost\r\nAuthorization: Bearer ${h.api.token}\r\nConnection: close\r\n\r\n`);
        socket.write(body);
        if (cut === 'half-close') socket.end();
        // The server must have read the head before the connection goes, or nothing reaches the app.
        else if (cut === 'destroy') setImmediate(() => h.api.get('/api/job-roles').then(() => socket.destroy(), reject));
      });
    });
  }
  const jsonPost = (path: string, body: Buffer, headers: string[] = [], contentType = 'application/json') =>
    send([`POST ${path} HTTP/1.1`, `Content-Type: ${contentType}`, `Content-Length: ${body.length}`, ...headers].join('\r\n'), body);
  const errorLogs = () => logLines.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);

  it('answers a path id that is not valid percent-encoding with 400 INVALID_ID', async () => {
    for (const id of ['%ZZ', '%', '%E0%A4%A']) {
      const answer = await send(`GET /api/tasks/${id} HTTP/1.1`);
      expect({ id, status: answer.status, body: answer.body }).toEqual({
        id,
        status: 400,
        body: { success: false, error: { code: 'INVALID_ID', message: 'A path id is not valid percent-encoding', details: [{ path: '(path)', message: 'must be a UUID' }] } },
      });
    }
    const member = await send(`PUT /api/projects/${ids.project}/members/% HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2`, Buffer.from('{}'));
    expect(member.status).toBe(400);
    expect(member.body).toMatchObject({ error: { code: 'INVALID_ID' } });
  });

  it('answers a compressed body that does not decompress with 400 MALFORMED_JSON, and reads a valid one', async () => {
    const garbage = Buffer.from('this is not compressed');
    for (const encoding of ['gzip', 'br', 'deflate']) {
      const answer = await jsonPost('/api/job-roles', garbage, [`Content-Encoding: ${encoding}`]);
      expect({ encoding, status: answer.status, body: answer.body }).toEqual({
        encoding,
        status: 400,
        body: { success: false, error: { code: 'MALFORMED_JSON', message: 'The request body could not be read (is its Content-Encoding right?)' } },
      });
    }
    const zipped = zlib.gzipSync(JSON.stringify({ name: 'Zipped role' }));
    const created = await jsonPost('/api/job-roles', zipped, ['Content-Encoding: gzip']);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ success: true, body: { name: 'Zipped role' } });
  });

  it('answers a JSON body in any charset but UTF-8 with 415', async () => {
    const text = JSON.stringify({ name: 'Wide role' });
    for (const [charset, bytes] of [['utf-16', Buffer.from(`\ufeff${text}`, 'utf16le')], ['utf-16le', Buffer.from(text, 'utf16le')], ['UTF-32', Buffer.from(text)], ['"latin1"', Buffer.from(text)]] as const) {
      const answer = await jsonPost('/api/job-roles', bytes, [], `application/json; charset=${charset}`);
      expect({ charset, status: answer.status, body: answer.body }).toEqual({
        charset,
        status: 415,
        body: { success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body must be UTF-8 JSON' } },
      });
    }
    const utf8 = await jsonPost('/api/job-roles', Buffer.from(JSON.stringify({ name: 'Rôle UTF-8' })), [], 'application/json; charset=UTF-8');
    expect(utf8.status).toBe(201);
  });

  /*
   * A client that announces more bytes than it sends and half-closes its side: Node's HTTP parser
   * sees the end of the stream mid-body and answers `400 Bad Request` itself, before the app has read
   * the body. A client that drops the connection instead leaves the body parser with `request aborted`:
   * that is a 400 too (nobody is left to read it), never a logged 500. Either way the service stays up.
   */
  it('answers a body cut short with 400, logs no 500, and keeps serving', async () => {
    const errorsBefore = errorLogs().length;
    const head = ['POST /api/job-roles HTTP/1.1', 'Content-Type: application/json', 'Content-Length: 100'].join('\r\n');
    const halfClosed = await send(head, Buffer.from('{"name": "Cut'), 'half-close');
    expect(halfClosed.status).toBe(400);
    const dropped = await send(head, Buffer.from('{"name": "Cut'), 'destroy');
    expect(dropped.raw).toBe(''); // the client is gone before any answer
    // The aborted body is logged at info level as a 400 by the request logger, once the socket is gone.
    await h.api.get('/api/job-roles').expect(200);
    expect(errorLogs().slice(errorsBefore)).toEqual([]);
    const cut = await h.db('job_roles').where({ team_id: h.teamId }).whereLike('name', 'Cut%').select('id');
    expect(cut).toEqual([]);
  });
});

describe('logs', () => {
  it('keep the path of a request but not its query string', async () => {
    await h.api.get(`/api/project-finance/project/${ids.project}/tasks?api_key=s3cret-in-query`).expect(400);
    const line = logLines.find((entry) => entry.includes(`/api/project-finance/project/${ids.project}/tasks"`) && entry.includes('"statusCode":400'));
    expect(line).toBeDefined();
    expect(logLines.filter((entry) => entry.includes('s3cret-in-query'))).toEqual([]);
  });

  it('log a failed request (5xx) by its path, without the query string', () => {
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    const req = { method: 'GET', originalUrl: '/api/projects?api_key=s3cret-in-query' };
    errorHandler(logger)(new Error('boom'), req as never, { headersSent: true } as never, () => undefined);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ level: 50, msg: 'request failed', method: 'GET', path: '/api/projects' });
    expect(lines[0]).not.toContain('s3cret');
  });
});

describe('ids in upper case', () => {
  it('match case-insensitively in paths and in bodies', async () => {
    const up = (id: string) => id.toUpperCase();
    const project = await createProject(h.api);
    const role = await createJobRole(h.api);
    const member = await createMember(h.api, { name: 'Upper Case' });
    await h.api.put(`/api/projects/${up(project.id)}/members/${up(member.id)}`, { job_role_id: up(role.id) }).expect(201);
    await h.api.put(`/api/projects/${up(project.id)}/rate-card`, { roles: [{ job_role_id: up(role.id), hourly_rate: 40 }] }).expect(200);
    const parent = await h.api.post(`/api/projects/${up(project.id)}/tasks`, { name: 'Parent', estimated_hours: 2, assignee_ids: [up(member.id)] }).expect(201);
    const parentId = parent.body.body.id as string;
    const child = await h.api.post(`/api/projects/${project.id}/tasks`, { name: 'Child', parent_task_id: up(parentId) }).expect(201);
    expect(child.body.body.parent_task_id).toBe(parentId);
    await h.api.post(`/api/tasks/${up(parentId)}/time-logs`, { team_member_id: up(member.id), seconds: 1800 }).expect(201);
    const read = await h.api.get(`/api/project-finance/task/${up(parentId)}/breakdown`).expect(200);
    // 2 h estimated and 0.5 h logged by the one assignee, at 40 an hour.
    expect(read.body.body.task).toMatchObject({ id: parentId, estimated_hours: 2, logged_hours: 0.5, estimated_labor_cost: 80, actual_labor_cost: 20 });
    expect(read.body.body.members).toEqual([expect.objectContaining({ team_member_id: member.id })]);
  });
});
