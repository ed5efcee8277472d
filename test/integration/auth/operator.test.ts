import request from 'supertest';
import { createApp } from '../../../src/app';
import { createLogger } from '../../../src/logger';
import { Harness, startHarness } from '../../support/harness';

/*
 * What an operator sets up around the API: /metrics behind METRICS_TOKEN, the proxy whose
 * X-Forwarded-For tells the client (TRUST_PROXY), and a /docs page that keeps no token.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const logger = createLogger('silent');

describe('/metrics with METRICS_TOKEN', () => {
  const metricsToken = 'metrics-scraper-secret-0123456789abcdef';
  const app = () => createApp({ db: h.db, logger, metricsToken });

  it('answers only a scraper that sends the token as a bearer', async () => {
    const served = app();
    const none = await request(served).get('/metrics').expect(401);
    expect(none.body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' } });
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(none.text).not.toContain('http_requests_total');
    await request(served).get('/metrics').set('Authorization', 'Bearer metrics-scraper-secret-0123456789abcdeX').expect(401);
    // An API token, even an admin's, is not the metrics token.
    await request(served).get('/metrics').set('Authorization', `Bearer ${h.api.token}`).expect(401);
    const scraped = await request(served).get('/metrics').set('Authorization', `Bearer ${metricsToken}`).expect(200);
    expect(scraped.text).toContain('process_cpu_user_seconds_total');
  });

  it('stays open without one', async () => {
    await request(createApp({ db: h.db, logger })).get('/metrics').expect(200);
  });
});

describe('TRUST_PROXY', () => {
  // supertest connects from 127.0.0.1: the proxy, when loopback is trusted.
  const limited = (trustProxy: boolean | number | string) => createApp({ db: h.db, logger, rateLimitPerMinute: 2, trustProxy });
  const from = (app: ReturnType<typeof limited>, client: string) =>
    request(app).get('/api/job-roles').set('X-Forwarded-For', client).set('Authorization', `Bearer ${h.api.token}`);

  it("counts each client behind a trusted proxy on its own, by X-Forwarded-For's address", async () => {
    for (const trusted of ['loopback', 1]) {
      const app = limited(trusted);
      await from(app, '203.0.113.1').expect(200);
      await from(app, '203.0.113.1').expect(200);
      await from(app, '203.0.113.1').expect(429);
      await from(app, '203.0.113.2').expect(200);
    }
  });

  it('counts the proxy itself when it is not trusted (the default), whatever X-Forwarded-For says', async () => {
    const app = limited(false);
    await from(app, '203.0.113.1').expect(200);
    await from(app, '203.0.113.2').expect(200);
    await from(app, '203.0.113.3').expect(429);
  });
});

describe('/docs', () => {
  it('does not keep the token in the browser (persistAuthorization false)', async () => {
    const init = await request(h.app).get('/docs/init.js').expect(200);
    expect(init.text).toMatch(/persistAuthorization:\s*false/);
  });
});
