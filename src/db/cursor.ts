import type { Knex } from 'knex';

/** Rows fetched per round trip by readInBatches. */
export const CURSOR_BATCH = 1000;

/**
 * The rows of one statement, fetched through a cursor `batch` rows at a time (in the caller's
 * transaction, or in one of its own). A whole project's rows in one answer arrive in one go and are
 * parsed by the driver in one stretch of the event loop (tens of milliseconds for 10,000 rows,
 * several exports at once adding up); fetched in batches, each batch is a turn of its own, with
 * other requests' work between them. A cursor reads one snapshot, as the statement alone would.
 */
export async function readInBatches<T>(db: Knex, sql: string, bindings: Readonly<Record<string, unknown>>, batch = CURSOR_BATCH): Promise<T[]> {
  const read = async (trx: Knex) => {
    await trx.raw(`declare batched_rows no scroll cursor for ${sql}`, bindings);
    const rows: T[] = [];
    for (;;) {
      const fetched = ((await trx.raw(`fetch forward ${Number(batch)} from batched_rows`)) as { rows: T[] }).rows;
      for (const row of fetched) rows.push(row);
      if (fetched.length < batch) break;
    }
    await trx.raw('close batched_rows');
    return rows;
  };
  return (db as Knex.Transaction).isTransaction ? read(db) : db.transaction(read);
}
