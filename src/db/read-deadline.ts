import type { Knex } from 'knex';
import { PgConnection, watchStatements } from './statements';

/*
 * A PostgreSQL server that stops answering altogether (a frozen connection: its socket open, nothing
 * sent back) is bounded on the client. A statement still unanswered `ms` after it was handed to the
 * driver fails, and so does every other statement of its connection, which is closed: the pool
 * replaces it rather than queue more statements behind one that will not finish. The request answers
 * 503 (http/error-handler.ts: "Query read timeout", or the lost connection when its transaction then
 * rolls back). knex.ts sets the bound 5 s past the server's statement_timeout, which cancels a
 * statement that runs too long on the server; this one also counts the time a statement waits behind
 * another of its connection and its transfer. Opening a connection is bounded by the pool's acquire
 * timeout instead (knex.ts).
 *
 * One sweep over the statements in flight, a few times a second, does this: not node-postgres's
 * query_timeout, which arms a timer per statement. With that timer, the results of most statements
 * outlived the heap's young generation: under random breakdowns, 397-471 MB of them were promoted in
 * 8 s and collected by 32-41 full collections, against 6 MB and 2 with the sweep (each breakdown's
 * 23 KB of stored parts among them); p99 15-16 against 6 ms in the main bench (BENCHMARKS.md,
 * fifteenth run). Why a timer per statement keeps them alive was not found: in a small script, one
 * pending timer did it.
 */

/** A statement sent and not yet answered, by when it must be. */
type InFlight = { client: PgConnection; deadline: number };

/** How often the statements in flight are looked at: a statement fails at most this late. */
const SWEEP_MS = 250;

const inFlight = new Set<InFlight>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(now = performance.now()): void {
  for (const statement of inFlight) {
    if (statement.deadline > now) continue;
    inFlight.delete(statement);
    // Every statement on the connection fails with this error, and knex's pool discards the connection.
    statement.client.connection?.stream?.destroy(new Error('Query read timeout'));
  }
}

const bounded = new WeakSet<object>();

/**
 * Bounds every statement of a PostgreSQL knex's pooled connections to `ms` milliseconds without an
 * answer (0: no bound). The sweep runs while the process does, never keeping it alive.
 */
export function boundReads(db: Knex, ms: number): Knex {
  if (ms <= 0 || bounded.has(db.client as object)) return db;
  bounded.add(db.client as object);
  sweeper ??= setInterval(sweep, SWEEP_MS).unref();
  watchStatements(db, (connection) => {
    const statement: InFlight = { client: connection, deadline: performance.now() + ms };
    inFlight.add(statement);
    return () => inFlight.delete(statement);
  });
  return db;
}
