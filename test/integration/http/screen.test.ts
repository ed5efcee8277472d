import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';

/* GET / serves the built finance screen; checked on a small stand-in build, so no Vite build is needed. */
let h: Harness;
let webDir: string;
beforeAll(async () => {
  h = await startHarness();
  webDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-web-'));
  fs.mkdirSync(path.join(webDir, 'assets'));
  fs.writeFileSync(path.join(webDir, 'index.html'), '<!doctype html><script type="module" src="/assets/index-abc123.js"></script>');
  fs.writeFileSync(path.join(webDir, 'assets/index-abc123.js'), 'console.log(1);\n');
});
afterAll(async () => {
  fs.rmSync(webDir, { recursive: true, force: true });
  await h.close();
});

const HOST = 'finance.internal.example:8080';

describe('the finance screen at GET /', () => {
  it('serves index.html revalidated every time, under a CSP that allows this origin only and no upgrade over plain HTTP', async () => {
    const app = createApp({ db: h.db, logger: createLogger('silent'), webDir });
    const res = await request(app).get('/').set('Host', HOST).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('/assets/index-abc123.js');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('upgrade-insecure-requests');
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('serves hashed assets with a year of immutable caching, and 404 for unknown ones', async () => {
    const app = createApp({ db: h.db, logger: createLogger('silent'), webDir });
    const res = await request(app).get('/assets/index-abc123.js').set('Host', HOST).expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).toMatch(/javascript/);
    await request(app).get('/assets/missing-000.js').expect(404);
  });

  it('adds upgrade-insecure-requests only when served over HTTPS', async () => {
    const app = createApp({ db: h.db, logger: createLogger('silent'), webDir, servedOverHttps: true });
    const res = await request(app).get('/').expect(200);
    expect(String(res.headers['content-security-policy'])).toContain('upgrade-insecure-requests');
  });

  it('leads to /docs while no screen is built', async () => {
    const app = createApp({ db: h.db, logger: createLogger('silent'), webDir: path.join(webDir, 'absent') });
    const res = await request(app).get('/').expect(302);
    expect(res.headers.location).toBe('/docs');
  });
});
