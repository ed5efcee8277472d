import { Harness, startHarness } from '../../support/harness';

/*
 * budget-watch.ts evaluates a budgeted project's thresholds by wrapping the transaction's `commit`:
 * it relies on knex (pinned exactly in package.json) committing a transaction callback's result
 * through that method, and on statements run inside the wrapper still being part of the transaction.
 * This fails if an upgrade of knex commits another way (the crossings would silently stop).
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.close();
});

it("commits a transaction callback's result through trx.commit, with the wrapper's statements inside the transaction", async () => {
  await h.db.raw('create table if not exists commit_hook_probe (n int)');
  const seen: string[] = [];
  const result = await h.db.transaction(async (trx) => {
    await trx.raw('insert into commit_hook_probe (n) values (1)');
    const commit = trx.commit.bind(trx);
    trx.commit = (async (value?: unknown) => {
      seen.push('commit');
      await trx.raw('insert into commit_hook_probe (n) values (2)');
      return commit(value);
    }) as typeof trx.commit;
    return 'done';
  });
  expect(result).toBe('done');
  expect(seen).toEqual(['commit']);
  const rows = await h.db.raw('select n from commit_hook_probe order by n');
  expect(rows.rows.map((r: { n: number }) => r.n)).toEqual([1, 2]);
  await h.db.raw('drop table commit_hook_probe');
});

it('rolls back the statements of the wrapper when the callback throws (the wrapper is never called)', async () => {
  await h.db.raw('create table if not exists commit_hook_probe2 (n int)');
  const seen: string[] = [];
  await expect(
    h.db.transaction(async (trx) => {
      const commit = trx.commit.bind(trx);
      trx.commit = (async (value?: unknown) => {
        seen.push('commit');
        return commit(value);
      }) as typeof trx.commit;
      await trx.raw('insert into commit_hook_probe2 (n) values (1)');
      throw new Error('no');
    }),
  ).rejects.toThrow('no');
  expect(seen).toEqual([]);
  const rows = await h.db.raw('select count(*)::int as c from commit_hook_probe2');
  expect(rows.rows[0].c).toBe(0);
  await h.db.raw('drop table commit_hook_probe2');
});
