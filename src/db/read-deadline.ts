import type { Knex } from 'knex';
import { StatementEvent, connectionsOf } from './statements';

/*
 * A PostgreSQL server that stops answering altogether (a frozen connection: its socket open, nothing
 * sent back) is bounded on the client. node-postgres's `query_timeout` (set in knex.ts, 5 s past the
 * server's statement_timeout) fails a statement still unanswered by then with "Query read timeout";
 * its connection is then ended here (node-postgres's end() drops the socket of a connection whose
 * statement is still out), so the pool replaces it rather than queue more statements behind one that
 * will not finish. The request answers 503 (http/error-handler.ts). statement_timeout cancels a
 * statement that runs too long on the server; this bound also counts the time a statement waits
 * behind another of its connection, and its transfer. Opening a connection is bounded by the pool's
 * acquire timeout instead (knex.ts).
 */

const READ_TIMEOUT = /Query read timeout$/;
const bounded = new WeakSet<Knex>();

/** Ends the connection of every statement of `db` that node-postgres gave up waiting for. */
export function endConnectionsGivenUp(db: Knex): Knex {
  const connections = connectionsOf(db);
  if (!connections || bounded.has(db)) return db;
  bounded.add(db);
  db.on('query-error', (error: { message?: string } | undefined, event: StatementEvent) => {
    if (!READ_TIMEOUT.test(error?.message ?? '')) return;
    connections
      .of(event)
      ?.end()
      .catch(() => undefined);
  });
  return db;
}
