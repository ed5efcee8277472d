import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { Knex } from 'knex';
import { PgConnection, watchStatements } from './statements';

/*
 * A query whose client has gone away is cancelled on the server, not left running for minutes.
 *
 * Each API request runs in a scope (AsyncLocalStorage) that records which pooled connections are
 * executing one of its statements right now. When the response's socket closes before the response
 * was sent, the statements still running are cancelled with pg_cancel_backend, guarded by the
 * statement's text so that a connection that has meanwhile moved on to another request's work is
 * left alone. The request then fails like any cancelled statement (57014) and its transaction rolls
 * back: nothing the client never saw acknowledged is half-written. Work that several requests share
 * (outsideRequests) runs in no request's scope and is not cancelled; a request whose client left stops
 * when it ends (stopIfClientLeft).
 *
 * PostgreSQL server only: PGlite runs one statement at a time in this process and cannot be
 * interrupted, so there the scope is a no-op.
 */

/** A request's statements running now, and whether its client has left (before its response was complete). */
type Scope = { running: Map<PgConnection, string>; gone: boolean };

const scopes = new AsyncLocalStorage<Scope>();
const tracked = new WeakSet<object>();

/** Whether `db` talks to a PostgreSQL server through node-postgres (not to the embedded PGlite). */
export const onPostgresServer = (db: Knex): boolean => tracked.has(db.client as object);

/** Records each statement of a PostgreSQL knex's pooled connections in its request's scope (db/statements.ts). */
export function trackRequestQueries(db: Knex): Knex {
  if (tracked.has(db.client as object)) return db;
  tracked.add(db.client as object);
  watchStatements(db, (connection, config) => {
    const scope = scopes.getStore();
    if (!scope || typeof config?.text !== 'string') return undefined;
    scope.running.set(connection, config.text);
    return () => scope.running.delete(connection);
  });
  return db;
}

/**
 * Middleware: runs the rest of the request in a scope, and cancels the scope's running statements
 * when the client leaves before the response is complete.
 */
export function cancelQueriesWhenClientLeaves(db: Knex) {
  const isPostgres = tracked.has(db.client as object);
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isPostgres) return next();
    const scope: Scope = { running: new Map(), gone: false };
    res.once('close', () => {
      if (res.writableFinished) return;
      scope.gone = true;
      for (const [connection, sql] of scope.running) void cancel(db, connection, sql, req);
    });
    scopes.run(scope, next);
  };
}

/**
 * After work shared with other requests (a batched read, db/batched-reads.ts; a project's refresh,
 * finance/read-model/freshness.ts), which is not cancelled when one of their clients leaves: a request whose client
 * has left stops there, failing as a statement cancelled for it would (57014, logged as a client that
 * went away), rather than go on working for nobody.
 */
export function stopIfClientLeft(): void {
  if (scopes.getStore()?.gone) throw Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
}

/** The async context of work that belongs to no request: made when this module loads, inside none. */
const noRequest = new AsyncResource('outside-requests');

/**
 * Runs `fn` in no request's async context (not just outside this module's scope: no per-request
 * context reaches it): statements it starts belong to no request and are never cancelled for one.
 */
export function outsideRequests<T>(fn: () => T): T {
  return noRequest.runInAsyncScope(fn);
}

async function cancel(db: Knex, connection: PgConnection, sql: string, req: Request): Promise<void> {
  if (connection.processID === undefined) return;
  try {
    // Outside the request's scope: this statement belongs to nobody's request.
    await outsideRequests(() =>
      db.raw(
        `select pg_cancel_backend(pid) from pg_stat_activity
          where pid = ? and state = 'active' and query = ?`,
        [connection.processID!, sql],
      ),
    );
  } catch (error) {
    req.log?.warn({ err: error }, 'could not cancel the statement of a request whose client left');
  }
}
