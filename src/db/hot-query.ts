import type { Knex } from 'knex';
import { prepared } from './prepared';
import { onPostgresServer } from './request-queries';

/*
 * The hottest statements (a time log, a stored breakdown) run straight on a pooled connection of the
 * PostgreSQL server: knex parses a statement's named bindings again and builds a runner for it on every
 * call, a tenth of a time log's CPU. Here the statement is turned into numbered parameters once, by
 * knex itself, and prepared by name as prepared.ts does; what knex adds around a statement that these
 * need is kept (the pool, its connection settings and checks, the 'query' event). In a transaction,
 * and on the embedded database, the statement goes through knex as any other.
 */

type PgConnection = { __knexUid?: string; query(config: { name: string; text: string; values: unknown[] }, callback: (err: Error | null, result: { rows: unknown[] }) => void): void };
type PoolClient = Knex.Client & {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
};

/** A statement's text with numbered parameters, and the binding each number takes, in order. */
type Compiled = { text: string; order: string[] };
const compiledByName = new Map<string, Compiled>();

const MARK = '\u0000binding:';

function compile(db: Knex, sql: string, bindings: Readonly<Record<string, unknown>>): Compiled {
  const marked = Object.fromEntries(Object.keys(bindings).map((key) => [key, `${MARK}${key}`]));
  const native = db.raw(sql, marked).toSQL().toNative();
  return { text: native.sql, order: native.bindings.map((value) => String(value).slice(MARK.length)) };
}

/** Runs a named statement with named bindings, like prepared(db.raw(sql, bindings), name), and answers its result. */
export async function hotQuery<Row>(db: Knex, name: string, sql: string, bindings: Readonly<Record<string, unknown>>): Promise<{ rows: Row[] }> {
  const client = db.client as PoolClient;
  if ((db as Knex.Transaction).isTransaction || !onPostgresServer(db)) {
    return prepared(db.raw(sql, bindings as Record<string, Knex.Value>), name) as unknown as Promise<{ rows: Row[] }>;
  }
  let compiled = compiledByName.get(name);
  if (!compiled) compiledByName.set(name, (compiled = compile(db, sql, bindings)));
  const { text, order } = compiled;
  const values = order.map((key) => bindings[key]);
  const connection = await client.acquireConnection();
  try {
    client.emit('query', { __knexUid: connection.__knexUid, method: 'raw', sql: text, bindings: values });
    return await new Promise((resolve, reject) => {
      connection.query({ name, text, values }, (err: Error | null, result: { rows: unknown[] }) => (err ? reject(err) : resolve(result as { rows: Row[] })));
    });
  } finally {
    await client.releaseConnection(connection);
  }
}
