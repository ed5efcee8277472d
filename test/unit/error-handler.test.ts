import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { errorHandler } from '../../src/http/error-handler';
import { createLogger } from '../../src/logger';

/*
 * Errors a lost database connection raises without a code (node-postgres's messages, written here by
 * hand) answer 503 with Retry-After like a refused connection; any other codeless error stays a 500.
 */
function appThrowing(err: Error) {
  const app = express();
  app.get('/', () => {
    throw err;
  });
  app.use(errorHandler(createLogger('silent')));
  return app;
}

it.each([
  'Connection terminated unexpectedly',
  'Connection terminated',
  'Connection terminated due to connection timeout',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  // As knex's query builder passes it on (seen in CI: the token lookup when the database went away).
  'select * from "api_tokens" where "secret_hash" = $1 and "revoked_at" is null limit $2 - Connection terminated unexpectedly',
])('answers 503 SERVICE_UNAVAILABLE with Retry-After for "%s"', async (message) => {
  const res = await request(appThrowing(new Error(message))).get('/');
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('1');
  expect(res.body).toEqual({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable; try again shortly' } });
});

it.each(['boom', 'Connection terminated by the caller', 'x Connection terminated', 'select 1 - Connection terminated by the caller'])('answers 500 for "%s"', async (message) => {
  const res = await request(appThrowing(new Error(message))).get('/');
  expect(res.status).toBe(500);
  expect(res.body.error.code).toBe('INTERNAL_ERROR');
});

/** An app whose one route waits until its client has gone, then fails with `err`; and the levels it logged. */
function appFailingAfterClientLeft(err: Error) {
  const levels: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const entry = JSON.parse(chunk.toString());
      levels.push({ level: entry.level, msg: entry.msg });
      done();
    },
  });
  const app = express();
  app.get('/', async (req) => {
    if (!req.socket.destroyed) await new Promise((resolve) => req.socket.once('close', resolve));
    throw err;
  });
  app.use(errorHandler(createLogger('info', sink)));
  return { app, levels };
}

async function requestAndLeave(app: express.Express, levels: unknown[]): Promise<void> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const req = http.get({ host: '127.0.0.1', port, path: '/' });
    req.on('error', () => undefined);
    // Leaves as soon as the request is sent, before any answer.
    req.on('socket', (socket) => socket.on('connect', () => setImmediate(() => req.destroy())));
    // Polls without a fixed expectation of speed; the test's own timeout turns a hang into a failure.
    while (levels.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

it('logs a statement cancelled because its client went away as information, not as a failed request', async () => {
  const cancelled = Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
  const { app, levels } = appFailingAfterClientLeft(cancelled);
  await requestAndLeave(app, levels);
  expect(levels).toEqual([{ level: 30, msg: 'client went away; its statements were cancelled' }]);
});

it.each([
  ['an unexpected error', new Error('boom')],
  ['a statement timeout', Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })],
])('still logs %s after the client went away as an error', async (_what, err) => {
  const { app, levels } = appFailingAfterClientLeft(err);
  await requestAndLeave(app, levels);
  expect(levels).toEqual([{ level: 50, msg: 'request failed' }]);
});

it('logs a statement timeout while the client waits as an error', async () => {
  const levels: number[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      levels.push(JSON.parse(chunk.toString()).level);
      done();
    },
  });
  const app = express();
  app.get('/', () => {
    throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
  });
  app.use(errorHandler(createLogger('info', sink)));
  const res = await request(app).get('/');
  expect(res.status).toBe(503);
  expect(levels).toEqual([50]);
});
