import { batchesOf, readInBatches } from '../../../src/db/cursor';
import { Harness, startHarness } from '../../support/harness';

/*
 * readInBatches and batchesOf (src/db/cursor.ts): the statement's rows, in order, however many batches
 * they take; batch by batch, with the cursor closed however the reader stops.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

const series = 'select g as n, cast(:label as text) as label from generate_series(1, cast(:count as int)) g order by g';
const expected = (count: number) => Array.from({ length: count }, (_, i) => ({ n: i + 1, label: 'x' }));

it.each([
  [0, 100],
  [1, 100],
  [99, 100],
  [100, 100],
  [101, 100],
  [2345, 1000],
])('reads all %i rows of a statement with bindings, %i at a time, in order', async (count, batch) => {
  expect(await readInBatches(h.db, series, { label: 'x', count }, batch)).toEqual(expected(count));
});

it("runs in the caller's transaction, which it leaves usable for a second read and other statements", async () => {
  await h.db.transaction(async (trx) => {
    await trx.raw('create temporary table cursor_probe (n int) on commit drop');
    await trx.raw('insert into cursor_probe select generate_series(1, 250)');
    // Rows only this transaction can see: read through its own connection, not another's.
    expect(await readInBatches(trx, 'select n from cursor_probe order by n', {}, 100)).toEqual(Array.from({ length: 250 }, (_, i) => ({ n: i + 1 })));
    expect(await readInBatches(trx, series, { label: 'x', count: 3 }, 2)).toEqual(expected(3));
    expect((await trx.raw('select count(*)::int as c from cursor_probe')).rows).toEqual([{ c: 250 }]);
    // Two at once in one transaction (each cursor has its own name).
    const [a, b] = await Promise.all([readInBatches(trx, series, { label: 'x', count: 5 }, 2), readInBatches(trx, series, { label: 'x', count: 7 }, 3)]);
    expect([a, b]).toEqual([expected(5), expected(7)]);
  });
});

it('refuses a batch of no rows (a fetch of 0 rows would never end)', async () => {
  await expect(readInBatches(h.db, series, { label: 'x', count: 3 }, 0)).rejects.toThrow(/at least one row/);
});

it('hands the rows out batch by batch, and closes the cursor when the reader stops early', async () => {
  await h.db.transaction(async (trx) => {
    const sizes: number[] = [];
    for await (const rows of batchesOf(trx, series, { label: 'x', count: 250 }, 100)) sizes.push(rows.length);
    expect(sizes).toEqual([100, 100, 50]);
    const firsts: unknown[] = [];
    for await (const rows of batchesOf(trx, series, { label: 'x', count: 250 }, 100)) {
      firsts.push(rows);
      break;
    }
    expect(firsts).toEqual([expected(100)]);
    expect((await trx.raw("select count(*)::int as open from pg_cursors where name like 'batched_rows_%'")).rows).toEqual([{ open: 0 }]);
  });
});

it('asks for the next batch before handing out the current one, so the database reads it meanwhile', async () => {
  const fetches: string[] = [];
  const onQuery = (query: { sql: string }) => {
    if (query.sql.startsWith('fetch forward')) fetches.push(query.sql);
  };
  h.db.on('query', onQuery);
  try {
    await h.db.transaction(async (trx) => {
      const asked: number[] = [];
      for await (const rows of batchesOf(trx, series, { label: 'x', count: 250 }, 100)) asked.push(rows.length && fetches.length);
      // Holding the first batch, the second was asked for; holding the last (50 rows), nothing more.
      expect(asked).toEqual([2, 3, 3]);
    });
    // A statement that fails in a later batch fails the read, whether that batch was asked for early or not.
    let failure: unknown;
    // The transaction itself ends aborted (its commit may fail too): only the read's failure is asserted.
    await h.db
      .transaction(async (trx) => {
        failure = await readInBatches(trx, 'select 1 / (g - 150) as q from generate_series(1, 300) g', {}, 100).then(
          () => undefined,
          (err: unknown) => err,
        );
      })
      .catch(() => undefined);
    expect(String(failure)).toMatch(/division by zero/);
  } finally {
    h.db.off('query', onQuery);
  }
});

it('reads batches only in a transaction (a cursor ends with its statement outside one)', async () => {
  await expect(batchesOf(h.db, series, { label: 'x', count: 3 }).next()).rejects.toThrow(/transaction/);
});
