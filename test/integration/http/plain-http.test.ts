import request from 'supertest';
import { createApp } from '../../../src/app';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

// A Docker user reaches the service by a host name or an IP, over plain HTTP.
const HOST = 'finance.internal.example:8080';

describe('over plain HTTP (the default)', () => {
  it('serves /docs and every asset it loads through a non-loopback host name, without forcing https', async () => {
    const page = await request(h.app).get('/docs/').set('Host', HOST).expect(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).not.toContain('upgrade-insecure-requests');
    expect(page.headers['strict-transport-security']).toBeUndefined();
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      // Relative (or same-host) references only: an https:// URL would be blocked or fail on plain HTTP.
      expect(asset).not.toMatch(/^https?:/);
      const url = new URL(asset, `http://${HOST}/docs/`);
      const res = await request(h.app).get(url.pathname).set('Host', HOST);
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      expect(res.headers['content-security-policy'] ?? '').not.toContain('upgrade-insecure-requests');
    }
  });

  it('leads the root to the API documentation', async () => {
    const res = await request(h.app).get('/').set('Host', HOST).expect(302);
    expect(res.headers.location).toBe('/docs');
  });
});

describe('SERVED_OVER_HTTPS', () => {
  it('adds HSTS and upgrade-insecure-requests only when the service is served over HTTPS', async () => {
    const app = createApp({ db: h.db, logger: createLogger('silent'), servedOverHttps: true });
    const res = await request(app).get('/docs/').set('Host', HOST).expect(200);
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(String(res.headers['content-security-policy'])).toContain('upgrade-insecure-requests');
  });
});

describe('/readyz during start-up', () => {
  it('answers 503 until start-up is complete, then 200', async () => {
    let started = false;
    const app = createApp({ db: h.db, logger: createLogger('silent'), isStarted: () => started });
    expect((await request(app).get('/readyz').expect(503)).body).toEqual({ status: 'starting' });
    started = true;
    expect((await request(app).get('/readyz').expect(200)).body).toEqual({ status: 'ready' });
  });
});
