import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * Long synchronous work in turns of the event loop. The service has one thread: a loop over a whole
 * project's tasks (thousands of calculator runs, or of rows rendered) that never lets go keeps every
 * other request, /healthz included, waiting until it ends. Such loops ask `due()` after each item and
 * await `take()` when it says so, which lets every callback waiting meanwhile run first.
 */

/** One turn of the event loop: what is waiting (I/O, other requests) runs before the caller goes on. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** How long a loop may run before it lets others have a turn. */
export const TURN_MS = 8;

export type Turns = { due(): boolean; take(): Promise<void> };

/** Background work's "the service is busy" test (inBackground), for the turns it takes. */
const background = new AsyncLocalStorage<() => boolean>();

/** How often background work waiting for a quiet moment looks again. */
const BUSY_POLL_MS = 5;

/**
 * Runs `work` as background work: every turn it takes (turns().take(), in whatever code it calls) also
 * waits until `busy()` is false. A turn of the event loop lets a request's next step run, but the
 * background work's next turn then competes with every later step: a rename on the benchmark's largest
 * project (some ten statements) took 150-170 ms instead of 30-50 while the breakdown-parts filler ran.
 * Only for work that holds no lock a request may wait for (a paused holder would keep it waiting).
 */
export function inBackground<T>(busy: () => boolean, work: () => Promise<T>): Promise<T> {
  return background.run(busy, work);
}

/**
 * Turns by time rather than by count (a task with a hundred members costs a hundred times one with
 * one): `due()` once `budgetMs` have passed since the last turn taken.
 */
export function turns(budgetMs = TURN_MS): Turns {
  let since = performance.now();
  return {
    due: () => performance.now() - since >= budgetMs,
    async take() {
      await nextTurn();
      const busy = background.getStore();
      if (busy) while (busy()) await new Promise((resolve) => setTimeout(resolve, BUSY_POLL_MS));
      since = performance.now();
    },
  };
}
