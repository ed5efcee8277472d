import type { Knex } from 'knex';

/*
 * Races staged with locks held by the test (PostgreSQL): a transaction of the test holds a row or an
 * advisory lock, requests are sent, and the test waits until the server shows them waiting for it, so
 * the interleaving under test happens every time, whatever the machine's speed.
 */

/** A transaction of its own holding the locks `take` takes, and its backend's pid. */
export async function holdLocks(db: Knex, take: (trx: Knex.Transaction) => Promise<unknown>): Promise<{ trx: Knex.Transaction; pid: number }> {
  const trx = await db.transaction();
  try {
    const pid = Number((await trx.raw('select pg_backend_pid() as pid')).rows[0].pid);
    await take(trx);
    return { trx, pid };
  } catch (err) {
    await trx.rollback();
    throw err;
  }
}

/** How many backends wait, directly or through another waiter, for a lock one of `pids` holds. */
export async function waitersOf(db: Knex, pids: readonly number[]): Promise<number> {
  const result = await db.raw(
    `with recursive blocked (pid) as (
       select pid from pg_stat_activity where pg_blocking_pids(pid) && cast(? as int[])
       union
       select a.pid from pg_stat_activity a join blocked b on b.pid = any(pg_blocking_pids(a.pid))
     )
     select count(*)::int as n from blocked`,
    [`{${pids.join(',')}}`],
  );
  return Number(result.rows[0].n);
}

/** Polls `probe` until it holds, without a time limit of its own (jest's bound stops a hang). */
export async function until(probe: () => Promise<boolean>): Promise<void> {
  while (!(await probe())) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** Waits until at least `count` backends wait for the locks of `pids` (see waitersOf). */
export function untilWaiting(db: Knex, pids: readonly number[], count: number): Promise<void> {
  return until(async () => (await waitersOf(db, pids)) >= count);
}
