import type { Knex } from 'knex';
import { batchedReads } from '../../src/db/batched-reads';

/*
 * The batching of src/db/batched-reads.ts, with a stand-in for the statement: which keys go together,
 * in which order answers come back, and what every waiter gets when the statement fails.
 */
const db = {} as Knex;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A read that records each call's keys and answers each key doubled. */
function recording(answer: (keys: readonly number[]) => Promise<(number | undefined)[]> = async (keys) => keys.map((k) => k * 2)) {
  const calls: number[][] = [];
  const read = batchedReads<number, number>(async (_db, keys) => {
    calls.push([...keys]);
    return answer(keys);
  }, { maxKeys: 3, identify: String });
  return { calls, read };
}

it('reads the keys asked for in one turn together, in groups of at most maxKeys, each answer to its own key', async () => {
  const { calls, read } = recording();
  const answers = await Promise.all([5, 1, 4, 3, 9, 2, 6].map((key) => read(db, key)));
  expect(answers).toEqual([10, 2, 8, 6, 18, 4, 12]);
  expect(calls).toEqual([
    [5, 1, 4],
    [3, 9, 2],
    [6],
  ]);
});

it('reads a key asked for several times in one turn once, every request getting its answer', async () => {
  const { calls, read } = recording();
  expect(await Promise.all([7, 3, 7, 7, 3, 8, 9, 7].map((key) => read(db, key)))).toEqual([14, 6, 14, 14, 6, 16, 18, 14]);
  // Groups count different keys.
  expect(calls).toEqual([[7, 3, 8], [9]]);
});

it('reads keys asked for in different turns apart', async () => {
  const { calls, read } = recording();
  const first = read(db, 1);
  await nextTurn();
  const second = read(db, 2);
  expect(await Promise.all([first, second])).toEqual([2, 4]);
  expect(calls).toEqual([[1], [2]]);
});

it('rejects every waiter of a group whose read fails, whether it rejects, throws or answers too few keys; other groups are answered', async () => {
  const failure = new Error('statement failed');
  for (const fail of [
    async () => Promise.reject(failure),
    () => {
      throw failure;
    },
    async () => [1],
  ]) {
    const { read } = recording(async (keys) => (keys.includes(0) ? (fail as () => Promise<number[]>)() : keys.map((k) => k * 2)));
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map((key) => read(db, key)));
    expect(results.slice(0, 3).map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(results.slice(3)).toEqual([
      { status: 'fulfilled', value: 6 },
      { status: 'fulfilled', value: 8 },
    ]);
  }
});

it('reads at once and alone in a transaction', async () => {
  const { calls, read } = recording();
  const trx = { isTransaction: true } as unknown as Knex;
  const outside = read(db, 1);
  expect(await read(trx, 7)).toBe(14);
  expect(calls).toEqual([[7]]);
  expect(await outside).toBe(2);
  expect(calls).toEqual([[7], [1]]);
});
