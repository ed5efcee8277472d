import type { Knex } from 'knex';

/** Rows fetched per round trip by readInBatches. */
export const CURSOR_BATCH = 1000;

let cursors = 0;

/**
 * The rows of one statement, fetched through a cursor `batch` rows at a time (in the caller's
 * transaction, or in one of its own). A whole project's rows in one answer arrive in one go and are
 * parsed by the driver in one stretch of the event loop (tens of milliseconds for 10,000 rows,
 * several exports at once adding up); fetched in batches, each batch is a turn of its own, with
 * other requests' work between them. A cursor reads one snapshot, as the statement alone would; it is
 * planned for reading every row (PostgreSQL otherwise plans a cursor for its first tenth).
 */
export async function readInBatches<T>(db: Knex, sql: string, bindings: Readonly<Record<string, unknown>>, batch = CURSOR_BATCH): Promise<T[]> {
  const read = async (trx: Knex) => {
    const rows: T[] = [];
    for await (const fetched of batchesOf<T>(trx, sql, bindings, batch)) for (const row of fetched) rows.push(row);
    return rows;
  };
  return (db as Knex.Transaction).isTransaction ? read(db) : db.transaction(read);
}

/**
 * The rows of one statement as they are fetched through a cursor, `batch` rows at a time, in the
 * caller's transaction: for a caller that reduces them as they come, so no more than two batches of
 * them are held at once (the one handed out and the next, asked for meanwhile). The cursor is closed
 * when the caller has read every batch or stops early.
 */
export async function* batchesOf<T>(trx: Knex, sql: string, bindings: Readonly<Record<string, unknown>>, batch = CURSOR_BATCH): AsyncGenerator<T[]> {
  if (!Number.isInteger(batch) || batch < 1) throw new Error(`Reading in batches needs a batch of at least one row, not ${batch}`);
  if (!(trx as Knex.Transaction).isTransaction) throw new Error('A cursor lives in a transaction: read its batches in one');
  // Its own name: two reads may share a transaction.
  const cursor = `batched_rows_${++cursors}`;
  await trx.raw('set local cursor_tuple_fraction = 1');
  await trx.raw(`declare ${cursor} no scroll cursor for ${sql}`, bindings);
  let open = true;
  // The next batch is asked for before this one is handed out, so the database reads it while the
  // caller works on this one (the connection runs its statements in turn, and this one is next).
  const fetch = () => {
    const next = trx.raw(`fetch forward ${batch} from ${cursor}`).then((result: { rows: T[] }) => result.rows);
    // Handled here too: a caller that stops early never awaits the batch asked for meanwhile.
    next.catch(() => undefined);
    return next;
  };
  try {
    let pending: Promise<T[]> | undefined = fetch();
    while (pending) {
      const fetched: T[] = await pending;
      pending = fetched.length < batch ? undefined : fetch();
      if (fetched.length > 0) yield fetched;
    }
    await trx.raw(`close ${cursor}`);
    open = false;
  } finally {
    // Stopped early (the caller's loop ended, or a statement failed): closed if the transaction still
    // can, after the batch asked for meanwhile (the connection runs them in turn).
    if (open) await trx.raw(`close ${cursor}`).catch(() => undefined);
  }
}
