import request from 'supertest';
import { Harness, startHarness } from '../../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('HTTP conventions', () => {
  it('answers health and readiness without a token', async () => {
    expect((await h.api.as(undefined).get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
    expect((await h.api.as(undefined).get('/readyz').expect(200)).body).toEqual({ status: 'ready' });
  });

  it('refuses malformed JSON (400), bodies over 100 KiB (413) and bodies that are not JSON (415)', async () => {
    const malformed = await h.api.post('/api/job-roles').set('Content-Type', 'application/json').send('{"name": "x"').expect(400);
    expect(malformed.body).toEqual({ success: false, error: { code: 'MALFORMED_JSON', message: expect.any(String) } });
    const big = await h.api.post('/api/job-roles').set('Content-Type', 'application/json').send(JSON.stringify({ name: 'x'.repeat(110 * 1024) })).expect(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const form = await h.api.post('/api/job-roles').set('Content-Type', 'application/x-www-form-urlencoded').send('name=x').expect(415);
    expect(form.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    await h.api.post('/api/job-roles').set('Content-Type', 'text/plain').send('{"name":"x"}').expect(415);
    const scalar = await h.api.post('/api/job-roles').set('Content-Type', 'application/json').send('"just a string"').expect(400);
    expect(scalar.body.error.code).toBe('MALFORMED_JSON');
    const roles = (await h.api.get('/api/job-roles').expect(200)).body.body;
    expect(roles).toEqual([]);
  });

  it('answers unknown routes with the error envelope', async () => {
    const res = await h.api.get('/api/nothing-here').expect(404);
    expect(res.body).toEqual({ success: false, error: { code: 'ROUTE_NOT_FOUND', message: 'No route for GET /api/nothing-here' } });
    await h.api.as(undefined).get('/nothing').expect(404);
  });

  it('answers an unknown route 404 whatever its method and body, after the token check', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(110 * 1024) });
    const bodies: [string, string | undefined, string | undefined][] = [
      ['none', undefined, undefined],
      ['JSON', 'application/json', '{"name":"x"}'],
      ['malformed JSON', 'application/json', '{"name": "x"'],
      ['a JSON scalar', 'application/json', '"just a string"'],
      ['text', 'text/plain', 'hello'],
      ['a form', 'application/x-www-form-urlencoded', 'name=x'],
      ['UTF-16 JSON', 'application/json; charset=utf-16', '{}'],
      ['over 100 KiB', 'application/json', big],
    ];
    // An unknown first segment, a known one with an unknown rest, and a known path with a method it has no route for.
    const targets: [string, string][] = [
      ['POST', '/api/nope'], ['PUT', '/api/nope'], ['PATCH', '/api/nope'], ['DELETE', '/api/nope'],
      ['POST', '/api/projects/x/nothing'], ['PATCH', '/api/job-roles'], ['PUT', '/api/job-roles'], ['DELETE', '/api/job-roles'],
    ];
    for (const [method, path] of targets) {
      for (const [label, type, body] of bodies) {
        const authorised = request(h.app)[method.toLowerCase() as 'post'](path).set('Authorization', `Bearer ${h.api.token}`);
        const res = await (type === undefined ? authorised : authorised.set('Content-Type', type).send(body));
        expect({ method, path, label, status: res.status, body: res.body }).toEqual({
          method, path, label, status: 404,
          body: { success: false, error: { code: 'ROUTE_NOT_FOUND', message: `No route for ${method} ${path}` } },
        });
      }
    }
    // The token is still checked first: no token is a 401 on any path.
    const anonymous = await request(h.app).post('/api/nope').expect(401);
    expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
    await request(h.app).post('/api/nope').set('Content-Type', 'text/plain').send('hello').expect(401);
    // Known routes still check their bodies.
    expect((await h.api.post('/api/job-roles').expect(400)).body.error.details).toEqual([{ path: '(body)', message: 'is required' }]);
    await h.api.post('/api/job-roles').set('Content-Type', 'text/plain').send('{"name":"x"}').expect(415);
    // A route that takes no body ignores one.
    expect((await h.api.get('/api/job-roles').set('Content-Type', 'text/plain').send('hello').expect(200)).body.body).toEqual([]);
  });

  it('echoes or assigns a request id and sets security headers', async () => {
    const echoed = await h.api.as(undefined).get('/healthz').set('X-Request-Id', 'abc-123').expect(200);
    expect(echoed.headers['x-request-id']).toBe('abc-123');
    const assigned = await h.api.as(undefined).get('/healthz').expect(200);
    expect(assigned.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(assigned.headers['x-content-type-options']).toBe('nosniff');
    expect(assigned.headers['x-powered-by']).toBeUndefined();
  });
});

describe('bodies', () => {
  it('refuses a body-taking request without a body instead of reading it as {}', async () => {
    const project = (await h.api.post('/api/projects', { name: 'Bodiless' }).expect(201)).body.body;
    const res = await h.api.patch(`/api/projects/${project.id}`).expect(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: '(body)', message: 'is required' }] });
    await h.api.patch(`/api/projects/${project.id}`).set('Content-Type', 'application/json').send('').expect(400);
    expect((await h.api.get(`/api/projects/${project.id}`).expect(200)).body.body.updated_at).toBe(project.updated_at);
  });
});
