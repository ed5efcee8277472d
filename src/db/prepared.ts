import type { Knex } from 'knex';

/**
 * Names a hot statement so node-postgres prepares it once per connection and PostgreSQL can reuse its
 * plan: the finance queries cost more to plan than to run. PGlite ignores the name. The SQL text
 * under one name must never vary, so a name covers exactly one shape of query.
 */
export function prepared<T extends { options(options: Readonly<Record<string, unknown>>): T }>(query: T, name: string): T {
  return query.options({ name });
}

/** A raw statement with named bindings, prepared under `name`; answers the driver's result (its rows). */
export function preparedRaw<Row>(db: Knex, name: string, sql: string, bindings: Readonly<Record<string, unknown>>): Promise<{ rows: Row[] }> {
  return prepared(db.raw(sql, bindings as Record<string, Knex.Value>), name) as unknown as Promise<{ rows: Row[] }>;
}
