import { Harness, startHarness } from '../../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ rateLimitPerMinute: 5 });
});
afterAll(() => h.close());

// The limiter counts in one-minute windows by Date.now(): the clock stands still during the test, so a
// slow machine cannot let a window end between the fifth and the sixth request.
beforeEach(() => jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 0, 1, 12)));
afterEach(() => jest.restoreAllMocks());

it('answers 429 RATE_LIMITED past the per-client limit, with RateLimit headers, and leaves /healthz alone', async () => {
  for (let i = 0; i < 5; i++) await h.api.get('/api/job-roles').expect(200);
  const limited = await h.api.get('/api/job-roles').expect(429);
  expect(limited.body).toEqual({ success: false, error: { code: 'RATE_LIMITED', message: 'Too many requests: at most 5 a minute per client' } });
  expect(limited.headers['ratelimit-policy']).toBe('5;w=60');
  await h.api.as(undefined).get('/healthz').expect(200);
});
