import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { loadConfig } from '../../../src/config';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';

const ALLOWED = 'https://finance.example.com';
const ALSO_ALLOWED = 'http://localhost:5173';
const OTHER = 'https://evil.example.net';

let h: Harness;
let app: Express;
let token: string;
beforeAll(async () => {
  h = await startHarness();
  app = createApp({ db: h.db, logger: createLogger('silent'), corsOrigins: [ALLOWED, ALSO_ALLOWED] });
  token = h.api.token as string;
});
afterAll(() => h.close());

const CORS_HEADERS = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers', 'access-control-allow-credentials', 'access-control-max-age'];
const corsHeadersOf = (headers: Record<string, unknown>) => CORS_HEADERS.filter((name) => headers[name] !== undefined);

describe('CORS_ORIGINS set', () => {
  it('answers an allowed origin\'s preflight with 204 and no token', async () => {
    const res = await request(app)
      .options('/api/project-finance/task/3f1c1b8e-1111-4222-8333-944455556666/fixed-cost')
      .set('Origin', ALLOWED)
      .set('Access-Control-Request-Method', 'PUT')
      .set('Access-Control-Request-Headers', 'authorization, content-type, if-match')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(res.headers['access-control-allow-methods']).split(',')).toContain('PUT');
    const allowedHeaders = String(res.headers['access-control-allow-headers']).toLowerCase().split(',');
    expect(allowedHeaders).toEqual(expect.arrayContaining(['authorization', 'content-type', 'if-match']));
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('puts the CORS headers on successes and on errors (401, 404, 400) for an allowed origin', async () => {
    const ok = await request(app).get('/api/projects').set('Origin', ALSO_ALLOWED).set('Authorization', `Bearer ${token}`).expect(200);
    expect(ok.headers['access-control-allow-origin']).toBe(ALSO_ALLOWED);
    expect(String(ok.headers['access-control-expose-headers'])).toMatch(/ETag/);
    expect(String(ok.headers['access-control-expose-headers'])).toMatch(/Content-Disposition/);
    // The next page of a list (docs/api.md, Pagination) must be readable by a page on another origin.
    expect(String(ok.headers['access-control-expose-headers'])).toMatch(/\bLink\b/);

    const unauthorised = await request(app).get('/api/projects').set('Origin', ALLOWED).expect(401);
    expect(unauthorised.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(unauthorised.body.error.code).toBe('UNAUTHORIZED');

    const missing = await request(app).get('/api/no-such-route').set('Origin', ALLOWED).set('Authorization', `Bearer ${token}`).expect(404);
    expect(missing.headers['access-control-allow-origin']).toBe(ALLOWED);

    const invalid = await request(app).get('/api/projects/not-a-uuid').set('Origin', ALLOWED).set('Authorization', `Bearer ${token}`).expect(400);
    expect(invalid.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('gives another origin no CORS header: its preflight meets authentication (401)', async () => {
    const preflight = await request(app)
      .options('/api/projects')
      .set('Origin', OTHER)
      .set('Access-Control-Request-Method', 'GET')
      .set('Access-Control-Request-Headers', 'authorization');
    expect(preflight.status).toBe(401);
    expect(corsHeadersOf(preflight.headers)).toEqual([]);
    const get = await request(app).get('/api/projects').set('Origin', OTHER).set('Authorization', `Bearer ${token}`).expect(200);
    expect(corsHeadersOf(get.headers)).toEqual([]);
  });
});

describe('CORS_ORIGINS unset (the default)', () => {
  it('sends no CORS header to any origin, and preflights need a token', async () => {
    const preflight = await request(h.app).options('/api/projects').set('Origin', ALLOWED).set('Access-Control-Request-Method', 'GET');
    expect(preflight.status).toBe(401);
    expect(corsHeadersOf(preflight.headers)).toEqual([]);
    const get = await request(h.app).get('/api/projects').set('Origin', ALLOWED).set('Authorization', `Bearer ${token}`).expect(200);
    expect(corsHeadersOf(get.headers)).toEqual([]);
  });
});

describe('CORS_ORIGINS in the configuration', () => {
  it('reads comma-separated origins, empty by default', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: ` ${ALLOWED}, ${ALSO_ALLOWED} ,` }).corsOrigins).toEqual([ALLOWED, ALSO_ALLOWED]);
  });

  it('refuses values that are not origins', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://finance.example.com/' })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ CORS_ORIGINS: 'finance.example.com' })).toThrow(/CORS_ORIGINS/);
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
  });
});
