import type { Knex } from 'knex';

/*
 * The statements of a PostgreSQL knex, seen through knex's public events ('query', 'query-response',
 * 'query-error'), and the pooled connections they run on, registered by the pool's afterCreate hook.
 * request-queries.ts records each statement in its request's scope; read-deadline.ts closes the
 * connection of a statement the server never answered. Nothing of knex or node-postgres is wrapped.
 */

/** A node-postgres client of the pool, as this service uses it: its server process, and end(). */
export type PgConnection = {
  processID?: number;
  end(): Promise<void>;
  once(event: 'end', listener: () => void): unknown;
};

/** What knex's query events say of a statement (documented: the connection's and the query's ids, its SQL). */
export type StatementEvent = { __knexUid?: string; __knexQueryUid?: string; sql?: unknown };

/** The pooled connections of one knex by knex's connection id, filled by the pool's afterCreate. */
export class PooledConnections {
  private readonly byUid = new Map<string, PgConnection>();

  /** For knex's `pool.afterCreate`: the connection has its `__knexUid` by then. */
  readonly afterCreate = (connection: PgConnection & { __knexUid?: string }, done: (err: Error | null, connection: unknown) => void): void => {
    const uid = connection.__knexUid;
    if (uid) {
      this.byUid.set(uid, connection);
      connection.once('end', () => this.byUid.delete(uid));
    }
    done(null, connection);
  };

  of(event: StatementEvent | undefined): PgConnection | undefined {
    return event?.__knexUid ? this.byUid.get(event.__knexUid) : undefined;
  }
}

const registries = new WeakMap<Knex, PooledConnections>();

/** Ties `db` to the registry its pool was configured with (knex.ts). */
export function registerConnections(db: Knex, connections: PooledConnections): void {
  registries.set(db, connections);
}

/** The pooled connections of a PostgreSQL knex; undefined on the embedded database. */
export const connectionsOf = (db: Knex): PooledConnections | undefined => registries.get(db);
