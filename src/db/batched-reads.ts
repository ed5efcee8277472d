import type { Knex } from 'knex';
import { outsideRequests } from './request-queries';

/*
 * One read that many requests make at once, each for its own key (a task's stored breakdown), run as
 * one statement per turn of the event loop. Every statement costs a round trip to the database, a
 * wake-up of its backend and the driver's work for one result, whatever its size: the keys asked for
 * while the loop takes up the requests that arrived together are read by one statement after that
 * turn, in groups of at most `maxKeys`. Under load the groups grow by themselves; a lone request
 * waits one turn of the loop, not a timer.
 *
 * The statement runs outside every request's scope (request-queries.ts): it serves several requests,
 * so one client that leaves does not cancel its neighbours' reads. It is a handful of indexed lookups,
 * under the connections' statement timeout like any other. In a transaction the read runs at once, on
 * the transaction's connection, alone.
 */

/** Reads `keys` in one statement: one answer per key, in the keys' order (undefined: nothing found). */
export type ReadAll<Key, Answer> = (db: Knex, keys: readonly Key[]) => Promise<(Answer | undefined)[]>;

type Waiting<Key, Answer> = { key: Key; resolve(answer: Answer | undefined): void; reject(err: unknown): void };

/** A read of one key that is batched with the other keys asked for in the same turn of the loop. */
export function batchedReads<Key, Answer>(readAll: ReadAll<Key, Answer>, maxKeys = 64): (db: Knex, key: Key) => Promise<Answer | undefined> {
  const pending = new Map<Knex, Waiting<Key, Answer>[]>();

  const run = async (db: Knex, group: readonly Waiting<Key, Answer>[]) => {
    try {
      const answers = await outsideRequests(() => readAll(db, group.map((waiting) => waiting.key)));
      group.forEach((waiting, i) => waiting.resolve(answers[i]));
    } catch (err) {
      for (const waiting of group) waiting.reject(err);
    }
  };

  const flush = (db: Knex) => {
    const all = pending.get(db) ?? [];
    pending.delete(db);
    for (let start = 0; start < all.length; start += maxKeys) void run(db, all.slice(start, start + maxKeys));
  };

  return async (db, key) => {
    if ((db as Knex.Transaction).isTransaction) return (await readAll(db, [key]))[0];
    return new Promise((resolve, reject) => {
      let waiting = pending.get(db);
      if (!waiting) {
        pending.set(db, (waiting = []));
        setImmediate(() => flush(db));
      }
      waiting.push({ key, resolve, reject });
    });
  };
}
