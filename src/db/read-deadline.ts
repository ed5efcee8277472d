import type { Knex } from 'knex';
import { PgConnection, PooledConnections, StatementEvent, connectionsOf } from './statements';

/*
 * A PostgreSQL server that stops answering altogether (a frozen connection: its socket open, nothing
 * sent back) is bounded on the client. A statement still unanswered `ms` after it was sent fails, and
 * so does every other statement of its connection, which is ended (node-postgres's end() drops the
 * socket of a connection whose statement is still out): the pool replaces it rather than queue more
 * statements behind one that will not finish. The request answers 503 (http/error-handler.ts: "Query
 * read timeout", or the lost connection when its transaction then rolls back). knex.ts sets the bound
 * 5 s past the server's statement_timeout, which cancels a statement that runs too long on the server;
 * this one also counts the time a statement waits behind another of its connection and its transfer.
 *
 * The statements are seen through knex's 'query', 'query-response' and 'query-error' events, and one
 * sweep a few times a second looks at them: not node-postgres's query_timeout, whose timer per
 * statement keeps every result alive past the heap's young generation.
 * A transaction's begin, commit and savepoints carry no query id and have no answer event: the
 * deadline of one ends when the connection's next statement is sent, so a connection idle for longer
 * than `ms` after a commit is ended too, as the pool's idle timeout (30 s) has done by then anyway.
 */

/** How often the statements in flight are looked at: a statement fails at most this late. */
const SWEEP_MS = 250;

/** The statement each connection is waiting on, and by when it must be answered. */
type InFlight = { connections: PooledConnections; connectionUid: string; queryUid: string | undefined; deadline: number };

const READ_TIMEOUT = 'Query read timeout';
const bounded = new WeakSet<Knex>();
/** Every bounded knex's connections waiting on a statement: one sweep for all, while the process runs. */
const inFlight = new Map<PgConnection, InFlight>();
/** The statement each connection ended here was waiting on (knex's connection id to query id), until it fails. */
const givenUp = new Map<string, string>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(now = performance.now()): void {
  for (const [connection, statement] of inFlight) {
    if (statement.deadline > now) continue;
    inFlight.delete(connection);
    // A connection already ended (it failed meanwhile) has nothing left to fail.
    if (!statement.connections.of({ __knexUid: statement.connectionUid })) continue;
    if (statement.queryUid) givenUp.set(statement.connectionUid, statement.queryUid);
    connection.end().catch(() => undefined);
  }
}

/** Bounds every statement of a PostgreSQL knex to `ms` milliseconds without an answer (0: no bound). */
export function boundReads(db: Knex, ms: number): Knex {
  const connections = connectionsOf(db);
  if (ms <= 0 || !connections || bounded.has(db)) return db;
  bounded.add(db);
  sweeper ??= setInterval(sweep, SWEEP_MS).unref();

  db.on('query', (event: StatementEvent) => {
    const connection = connections.of(event);
    if (connection) inFlight.set(connection, { connections, connectionUid: event.__knexUid as string, queryUid: event.__knexQueryUid, deadline: performance.now() + ms });
  });
  const answered = (event: StatementEvent | undefined) => {
    const connection = connections.of(event);
    if (connection && inFlight.get(connection)?.queryUid === event?.__knexQueryUid) inFlight.delete(connection);
  };
  db.on('query-response', (_response: unknown, event: StatementEvent) => answered(event));
  db.on('query-error', (error: { message?: string } | undefined, event: StatementEvent) => {
    answered(event);
    // The statement whose connection was ended here fails as a read timeout (503). Known by ids: the
    // registry forgets a connection as it ends.
    const connectionUid = event?.__knexUid;
    if (!error || !connectionUid || givenUp.get(connectionUid) !== event?.__knexQueryUid) return;
    givenUp.delete(connectionUid);
    error.message = `${error.message ?? ''} - ${READ_TIMEOUT}`;
  });

  return db;
}
