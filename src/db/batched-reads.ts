import { AsyncResource } from 'node:async_hooks';
import type { Knex } from 'knex';
import { stopIfClientLeft } from './request-queries';

/*
 * One read that many requests make at once, each for its own key (a task's stored breakdown), run as
 * one statement per turn of the event loop. Every statement costs a round trip to the database, a
 * wake-up of its backend and the driver's work for one result, whatever its size: the keys asked for
 * in one turn of the loop (requests that arrived together reach the read in the turn that takes them
 * up) are read by one statement after that turn, in groups of at most `maxKeys`. Under load the
 * groups grow by themselves; a lone request waits one turn of the loop, not a timer.
 *
 * The statement belongs to no request: it runs in an async context of its own, not in that of the
 * request that happened to ask first, so no request's scope (request-queries.ts) holds it and one
 * client that leaves does not cancel its neighbours' reads. It is a handful of indexed lookups, under
 * the connections' statement timeout like any other. A request whose client left meanwhile stops when
 * its answer comes (stopIfClientLeft). In a transaction the read runs at once, on the transaction's
 * connection, alone.
 */

/** Reads `keys` in one statement: one answer per key, in the keys' order (undefined: nothing found). */
export type ReadAll<Key, Answer> = (db: Knex, keys: readonly Key[]) => Promise<(Answer | undefined)[]>;

type Waiting<Key, Answer> = { key: Key; resolve(answer: Answer | undefined): void; reject(err: unknown): void };

/** The async context batches run in: made when this module loads, inside no request. */
const detached = new AsyncResource('batched-reads');

/** A read of one key that is batched with the other keys asked for in the same turn of the loop. */
export function batchedReads<Key, Answer>(readAll: ReadAll<Key, Answer>, maxKeys = 64): (db: Knex, key: Key) => Promise<Answer | undefined> {
  const pending = new Map<Knex, Waiting<Key, Answer>[]>();

  const run = async (db: Knex, group: readonly Waiting<Key, Answer>[]) => {
    try {
      const answers = await readAll(db, group.map((waiting) => waiting.key));
      if (answers.length !== group.length) throw new Error(`a batched read answered ${answers.length} keys of ${group.length}`);
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
    const answer = await new Promise<Answer | undefined>((resolve, reject) => {
      let waiting = pending.get(db);
      if (!waiting) {
        pending.set(db, (waiting = []));
        setImmediate(() => detached.runInAsyncScope(flush, null, db));
      }
      waiting.push({ key, resolve, reject });
    });
    stopIfClientLeft();
    return answer;
  };
}
