import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { createLogger } from '../../../src/logger';
import { deliver } from '../../../src/webhooks/deliver';
import { Worker, startWebhookWorker } from '../../../src/webhooks/webhooks.worker';
import { Api, Harness, startHarness } from '../../support/harness';
import { createProject } from '../../support/fixtures';
import { startReceiver, waitFor } from './receiver';

let h: Harness;
/** The same team through an app that lets webhooks point at 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE=true). */
let local: Api;
let worker: Worker;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const logger = createLogger('silent');

beforeAll(async () => {
  h = await startHarness();
  local = new Api(createApp({ db: h.db, logger, webhookAllowPrivate: true }), h.api.token);
  // Retries due at once: the schedule itself is retry-schedule.ts's (and its unit test's).
  worker = startWebhookWorker({ db: h.db, logger, allowPrivate: true, retryDelayMs: () => 0, pollMs: 50 });
  // /flaky fails its first request; /hang never answers; everything else is 200.
  receiver = await startReceiver((path, count) => (path === '/hang' ? 'hang' : path === '/stream-me' ? 'stream' : path === '/flaky' && count === 1 ? 500 : 200));
});
afterAll(async () => {
  await worker.stop();
  await receiver.close();
  await h.close();
});

type Attempt = { event_id: string; event_type: string; status_code: number | null; error: string | null; duration_ms: number; attempted_at: string; next_attempt_at: string | null; outcome: string };

async function register(path: string, eventTypes: string[] = ['project.changed']) {
  const res = await local.post('/api/webhooks', { url: receiver.url(path), event_types: eventTypes, description: `receiver ${path}` }).expect(201);
  return res.body.body as { id: string; url: string; event_types: string[]; description: string | null; secret: string };
}

const deliveries = async (id: string): Promise<Attempt[]> => (await local.get(`/api/webhooks/${id}/deliveries`).expect(200)).body.body;
const to = (path: string) => receiver.received.filter((r) => r.path === path);

async function expectInvalid(res: request.Response, field: string) {
  expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
  expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
}

describe('registering webhooks', () => {
  it('answers the secret once, lists and deletes webhooks', async () => {
    const created = await local.post('/api/webhooks', { url: 'https://hooks.example.com/finance', event_types: ['*'] }).expect(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const hook = created.body.body;
    expect(hook).toEqual({ id: expect.any(String), url: 'https://hooks.example.com/finance', event_types: ['*'], description: null, created_at: expect.any(String), secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/) });
    expect(Buffer.from(hook.secret.slice('whsec_'.length), 'base64').length).toBe(32);
    const listed = (await local.get('/api/webhooks').expect(200)).body.body;
    expect(listed.find((w: { id: string }) => w.id === hook.id)).toEqual({ id: hook.id, url: hook.url, event_types: ['*'], description: null, created_at: hook.created_at });
    expect(JSON.stringify(listed)).not.toContain(hook.secret);
    await local.delete(`/api/webhooks/${hook.id}`).expect(200);
    await local.delete(`/api/webhooks/${hook.id}`).expect(404);
    await local.get(`/api/webhooks/${hook.id}/deliveries`).expect(404);
    expect((await local.get('/api/webhooks/nope/deliveries').expect(400)).body.error.code).toBe('INVALID_ID');
  });

  it('refuses bad URLs, unknown event types and private addresses with 400 naming the field', async () => {
    const post = (body: object) => h.api.post('/api/webhooks', body);
    await expectInvalid(await post({ url: 'ftp://example.com/x', event_types: ['*'] }), 'url');
    await expectInvalid(await post({ url: 'javascript:alert(1)', event_types: ['*'] }), 'url');
    await expectInvalid(await post({ url: 'not a url', event_types: ['*'] }), 'url');
    await expectInvalid(await post({ event_types: ['*'] }), 'url');
    await expectInvalid(await post({ url: 'https://example.com/x', event_types: ['task.exploded'] }), 'event_types.0');
    await expectInvalid(await post({ url: 'https://example.com/x', event_types: [] }), 'event_types');
    await expectInvalid(await post({ url: 'https://example.com/x', event_types: ['*', 'task.changed'] }), 'event_types');
    await expectInvalid(await post({ url: 'https://example.com/x', event_types: ['task.changed', 'task.changed'] }), 'event_types');
    await expectInvalid(await post({ url: 'https://example.com/x', event_types: ['*'], secret: 'mine' }), 'secret');
    for (const url of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://[::1]/x', 'http://10.1.2.3/x', 'http://172.20.0.1/x', 'http://192.168.1.1/x', 'http://169.254.169.254/latest/meta-data', 'http://[fe80::1]/x', 'http://0.0.0.0/x', 'http://[::ffff:127.0.0.1]/x']) {
      await expectInvalid(await post({ url, event_types: ['*'] }), 'url');
    }
    expect((await h.api.get('/api/webhooks').expect(200)).body.body.filter((w: { url: string }) => !w.url.startsWith('http://127.0.0.1:') && w.url !== 'https://hooks.example.com/finance')).toEqual([]);
  });

  it('is for admins only', async () => {
    for (const role of ['viewer', 'editor']) {
      const token = (await h.api.post('/api/tokens', { name: `webhooks ${role}`, role }).expect(201)).body.body.token;
      const api = h.api.as(token);
      expect((await api.post('/api/webhooks', { url: 'https://example.com/x', event_types: ['*'] }).expect(403)).body.error.code).toBe('FORBIDDEN');
      await api.get('/api/webhooks').expect(403);
    }
  });
});

describe('delivering events', () => {
  it('POSTs each followed event, signed per Standard Webhooks, with the feed\'s id, type, occurred_at and data', async () => {
    const hook = await register('/signed', ['project.changed']);
    const project = await createProject(local);
    await createProject(local, { budget: 5 });
    await waitFor(() => to('/signed').length >= 2, 'two deliveries');
    await worker.poll();
    const feed = (await local.get('/api/events?type=project.changed&limit=1000').expect(200)).body.body.events;
    const verifier = new Webhook(hook.secret);
    for (const got of to('/signed')) {
      const payload = verifier.verify(got.body, got.headers as Record<string, string>) as { id: string };
      const event = feed.find((e: { id: string }) => e.id === payload.id);
      expect(payload).toEqual({ id: event.id, type: 'project.changed', occurred_at: event.occurred_at, data: event.data });
      expect(got.headers['webhook-id']).toBe(event.id);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      // A wrong secret does not verify.
      expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got.body, got.headers as Record<string, string>)).toThrow();
    }
    expect(to('/signed').map((r) => JSON.parse(r.body).data.project_id)).toContain(project.id);
    // Only the types followed: a task is not a project change.
    await local.post(`/api/projects/${project.id}/tasks`, { name: 'not followed' }).expect(201);
    await createProject(local);
    await waitFor(() => to('/signed').length >= 3, 'a third delivery');
    expect(to('/signed').map((r) => JSON.parse(r.body).type)).toEqual(['project.changed', 'project.changed', 'project.changed']);
    await waitFor(async () => (await deliveries(hook.id)).length === 3, 'three attempts logged');
    const log = await deliveries(hook.id);
    for (const attempt of log) {
      expect(attempt).toMatchObject({ event_type: 'project.changed', status_code: 200, error: null, next_attempt_at: null, outcome: 'delivered' });
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    }
    await local.delete(`/api/webhooks/${hook.id}`).expect(200);
  });

  it('retries a failed delivery with the same webhook-id, and logs each attempt', async () => {
    const hook = await register('/flaky', ['*']);
    const project = await createProject(local);
    await waitFor(() => to('/flaky').length >= 2, 'the retry');
    const [first, second] = to('/flaky');
    expect(second?.headers['webhook-id']).toBe(first?.headers['webhook-id']);
    expect(JSON.parse(second?.body ?? '')).toEqual(JSON.parse(first?.body ?? ''));
    expect(JSON.parse(first?.body ?? '').data.project_id).toBe(project.id);
    // Each attempt verifies on its own (its own timestamp).
    for (const got of [first, second]) new Webhook(hook.secret).verify(got?.body ?? '', got?.headers as Record<string, string>);
    await waitFor(async () => (await deliveries(hook.id)).length === 2, 'two attempts logged');
    const [latest, earliest] = await deliveries(hook.id);
    expect(earliest).toMatchObject({ event_id: first?.headers['webhook-id'], event_type: 'project.changed', status_code: 500, error: null, outcome: 'retrying', next_attempt_at: expect.any(String) });
    expect(latest).toMatchObject({ event_id: first?.headers['webhook-id'], status_code: 200, outcome: 'delivered', next_attempt_at: null });
    await local.delete(`/api/webhooks/${hook.id}`).expect(200);
  });

  it('keeps delivering to other webhooks while a receiver hangs, and times the hanging attempt out', async () => {
    const stuck = await register('/hang');
    const fine = await register('/fine');
    await createProject(local);
    await waitFor(() => receiver.hangingCount() >= 1, 'the hanging receiver to be called');
    await createProject(local);
    await waitFor(() => to('/fine').length >= 2, 'both events at the answering receiver');
    // Both events went to the answering receiver while the hanging one still holds its requests.
    expect(receiver.hangingCount()).toBeGreaterThanOrEqual(1);
    await local.delete(`/api/webhooks/${fine.id}`).expect(200);
    // The attempt gives up after 10 s and is logged as an error, to be retried.
    await waitFor(async () => (await deliveries(stuck.id)).length >= 1, 'the hanging attempt to time out');
    const [timedOut] = await deliveries(stuck.id);
    expect(timedOut).toMatchObject({ status_code: null, error: expect.stringMatching(/10 s/), outcome: 'retrying' });
    expect(timedOut?.duration_ms).toBeGreaterThanOrEqual(10_000);
    await local.delete(`/api/webhooks/${stuck.id}`).expect(200);
  });

  it('with two workers on one database, makes each delivery once', async () => {
    const second = startWebhookWorker({ db: h.db, logger, allowPrivate: true, pollMs: 50 });
    try {
      const hook = await register('/twice');
      for (let i = 0; i < 20; i += 1) await createProject(local);
      await waitFor(() => to('/twice').length >= 20, 'twenty deliveries');
      await waitFor(async () => (await deliveries(hook.id)).length >= 20, 'twenty attempts logged');
      await Promise.all([worker.poll(), second.poll()]);
      const ids = to('/twice').map((r) => r.headers['webhook-id']);
      expect(new Set(ids).size).toBe(20);
      expect(ids.length).toBe(20);
      await local.delete(`/api/webhooks/${hook.id}`).expect(200);
    } finally {
      await second.stop();
    }
  });

  it('exposes delivery counts and the oldest undelivered event\'s age in /metrics', async () => {
    const metrics = (await request(local.app).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/webhook_delivery_attempts_total\{result="delivered"\} [1-9]/);
    expect(metrics).toMatch(/webhook_delivery_attempts_total\{result="retrying"\} [1-9]/);
    expect(metrics).toMatch(/webhook_oldest_undelivered_event_age_seconds \d/);
  });
});

describe('the address a delivery connects to', () => {
  it('is refused when private, by literal or by name, unless allowed; an endless answer is read up to 64 KB', async () => {
    const message = (url: string) => ({ id: 'msg_1', body: '{}', url, secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}` });
    const before = receiver.received.length;
    const literal = await deliver(message(receiver.url('/guard')), { allowPrivate: false, now: new Date() });
    expect(literal).toMatchObject({ statusCode: null, error: expect.stringMatching(/private/) });
    const named = await deliver(message(`http://localhost:${receiver.port}/guard`), { allowPrivate: false, now: new Date() });
    expect(named).toMatchObject({ statusCode: null, error: expect.stringMatching(/private/) });
    expect(receiver.received.length).toBe(before);
    const allowed = await deliver(message(receiver.url('/guard')), { allowPrivate: true, now: new Date() });
    expect(allowed).toMatchObject({ statusCode: 200, error: null });
    const endless = await deliver(message(receiver.url('/stream-me')), { allowPrivate: true, now: new Date() });
    expect(endless).toMatchObject({ statusCode: 200, error: null });
  });
});
