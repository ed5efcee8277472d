import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { Knex } from 'knex';
import { PgConnection, StatementEvent, connectionsOf } from './statements';

/*
 * A query whose client has gone away is cancelled on the server, not left running for minutes.
 *
 * Each API request runs in a scope (AsyncLocalStorage) that records which of its statements are
 * running now and on which pooled connection, from knex's 'query' event (emitted in the request's
 * async context, as the statement is sent) to its 'query-response' or 'query-error'. When the
 * response's socket closes before the response was sent, the statements still running are cancelled
 * with pg_cancel_backend, guarded by the statement's text so that a connection that has meanwhile
 * moved on to another request's work is left alone. The request then fails like any cancelled
 * statement (57014) and its transaction rolls back: nothing the client never saw acknowledged is
 * half-written. Work that several requests share (outsideRequests) runs in no request's scope and is
 * not cancelled; a request whose client left stops when it ends (stopIfClientLeft).
 *
 * PostgreSQL server only: PGlite runs one statement at a time in this process and cannot be
 * interrupted, so there the scope is a no-op.
 */

/** A request's statements running now (by knex's query id), and whether its client has left (before its response was complete). */
type Scope = { running: Map<string, { connection: PgConnection; sql: string }>; gone: boolean };

const scopes = new AsyncLocalStorage<Scope>();
const tracked = new WeakSet<Knex>();

/** Records each statement of a PostgreSQL knex in its request's scope, through knex's query events. */
export function trackRequestQueries(db: Knex): Knex {
  const connections = connectionsOf(db);
  if (!connections || tracked.has(db)) return db;
  tracked.add(db);
  db.on('query', (event: StatementEvent) => {
    const scope = scopes.getStore();
    const queryUid = event.__knexQueryUid;
    const connection = connections.of(event);
    // A transaction's begin and commit have no query id and are not watched (they do not wait).
    if (!scope || !queryUid || !connection || typeof event.sql !== 'string') return;
    scope.running.set(queryUid, { connection, sql: event.sql });
  });
  // Answered in the same async context as sent: the request's scope.
  const answered = (event: StatementEvent | undefined) => {
    if (event?.__knexQueryUid) scopes.getStore()?.running.delete(event.__knexQueryUid);
  };
  db.on('query-response', (_response: unknown, event: StatementEvent) => answered(event));
  db.on('query-error', (_error: unknown, event: StatementEvent) => answered(event));
  return db;
}

/**
 * Middleware: runs the rest of the request in a scope, and cancels the scope's running statements
 * when the client leaves before the response is complete.
 */
export function cancelQueriesWhenClientLeaves(db: Knex) {
  const isPostgres = tracked.has(db);
  return (req: Request, res: Response, next: NextFunction) => {
    if (!isPostgres) return next();
    const scope: Scope = { running: new Map(), gone: false };
    res.once('close', () => {
      if (res.writableFinished) return;
      scope.gone = true;
      for (const { connection, sql } of scope.running.values()) void cancel(db, connection, sql, req);
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
