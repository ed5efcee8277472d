import type { Knex } from 'knex';
import { outsideRequests, stopIfClientLeft } from './request-queries';

/*
 * One read that many requests make at once, each for its own key (a task's stored breakdown), run as
 * one statement per turn of the event loop. Every statement costs a round trip to the database, a
 * wake-up of its backend and the driver's work for one result, whatever its size: the keys asked for
 * in one turn of the loop (requests that arrived together reach the read in the turn that takes them
 * up) are read by one statement after that turn, in groups of at most `maxKeys` keys, a key asked for
 * by several requests once. Under load the groups grow by themselves; a lone request waits one turn of
 * the loop, not a timer.
 *
 * The statement belongs to no request: it runs outside every request's async context
 * (request-queries.ts's outsideRequests), not in that of the request that happened to ask first, so
 * no request's scope holds it and one client that leaves does not cancel its neighbours' reads. It is
 * a handful of indexed lookups, under the connections' statement timeout like any other. A request
 * whose client left meanwhile stops when its answer comes (stopIfClientLeft). In a transaction the
 * read runs at once, on the transaction's connection, alone.
 */

/** Reads `keys` in one statement: one answer per key, in the keys' order (undefined: nothing found). */
export type ReadAll<Key, Answer> = (db: Knex, keys: readonly Key[]) => Promise<(Answer | undefined)[]>;

type Waiting<Answer> = { resolve(answer: Answer | undefined): void; reject(err: unknown): void };

/** The requests waiting for one key, and the key. */
type Asked<Key, Answer> = { key: Key; waiting: Waiting<Answer>[] };

export type BatchOptions<Key> = {
  /** At most this many keys in one statement. */
  maxKeys?: number;
  /**
   * Names a key: keys of one name asked for in one turn are read once, and their requests share the
   * answer (which is therefore not to be changed by any of them). Ten requests for one big task would
   * otherwise read its row ten times in one statement and wait for all ten.
   */
  identify: (key: Key) => string;
};

/** A read of one key that is batched with the other keys asked for in the same turn of the loop. */
export function batchedReads<Key, Answer>(readAll: ReadAll<Key, Answer>, { maxKeys = 64, identify }: BatchOptions<Key>): (db: Knex, key: Key) => Promise<Answer | undefined> {
  const pending = new Map<Knex, Map<string, Asked<Key, Answer>>>();

  const run = async (db: Knex, group: readonly Asked<Key, Answer>[]) => {
    try {
      const answers = await readAll(db, group.map((asked) => asked.key));
      if (answers.length !== group.length) throw new Error(`a batched read answered ${answers.length} keys of ${group.length}`);
      group.forEach((asked, i) => {
        for (const waiting of asked.waiting) waiting.resolve(answers[i]);
      });
    } catch (err) {
      for (const asked of group) for (const waiting of asked.waiting) waiting.reject(err);
    }
  };

  const flush = (db: Knex) => {
    const all = [...(pending.get(db)?.values() ?? [])];
    pending.delete(db);
    for (let start = 0; start < all.length; start += maxKeys) void run(db, all.slice(start, start + maxKeys));
  };

  return async (db, key) => {
    if ((db as Knex.Transaction).isTransaction) return (await readAll(db, [key]))[0];
    const answer = await new Promise<Answer | undefined>((resolve, reject) => {
      let turn = pending.get(db);
      if (!turn) {
        pending.set(db, (turn = new Map()));
        setImmediate(() => outsideRequests(() => flush(db)));
      }
      const name = identify(key);
      const asked = turn.get(name);
      if (asked) asked.waiting.push({ resolve, reject });
      else turn.set(name, { key, waiting: [{ resolve, reject }] });
    });
    stopIfClientLeft();
    return answer;
  };
}
