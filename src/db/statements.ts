import type { Knex } from 'knex';

/*
 * The statements sent on the pooled connections of a PostgreSQL knex, watched through one wrapper of
 * each connection's query method: request-queries.ts records each in its request's scope, and
 * read-deadline.ts bounds how long it may go unanswered. A watcher sees a statement as it is sent and
 * returns what to do when its answer (or its error) comes, before the caller hears of it. knex and
 * db/hot-query.ts always pass a callback; a statement sent without one is not watched.
 */

/** A node-postgres client of the pool, as watchers see it: its server process and the socket under it. */
export type PgConnection = {
  processID?: number;
  query: (config: unknown, callback?: unknown) => unknown;
  connection?: { stream?: { destroy(error?: Error): void } };
};

/** Sees a statement as it is sent (`config`: node-postgres's query config); returns what to run when it is answered. */
export type StatementWatcher = (connection: PgConnection, config: { text?: unknown } | undefined) => (() => void) | undefined;

const watchersOf = new WeakMap<object, StatementWatcher[]>();

/** Adds `watcher` to every statement of `db`'s pooled connections, opened from now on. */
export function watchStatements(db: Knex, watcher: StatementWatcher): void {
  const client = db.client as { acquireRawConnection(): Promise<PgConnection> };
  const watchers = watchersOf.get(client);
  if (watchers) {
    watchers.push(watcher);
    return;
  }
  const all = [watcher];
  watchersOf.set(client, all);
  const acquire = client.acquireRawConnection.bind(client);
  client.acquireRawConnection = async () => {
    const connection = await acquire();
    const query = connection.query.bind(connection);
    connection.query = (config, callback) => {
      if (typeof callback !== 'function') return query(config, callback);
      const answered: (() => void)[] = [];
      for (const watch of all) {
        const done = watch(connection, config as { text?: unknown } | undefined);
        if (done) answered.push(done);
      }
      if (answered.length === 0) return query(config, callback);
      return query(config, (...args: unknown[]) => {
        for (const done of answered) done();
        (callback as (...answer: unknown[]) => void)(...args);
      });
    };
    return connection;
  };
}
