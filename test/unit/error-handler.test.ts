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
