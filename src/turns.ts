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
      since = performance.now();
    },
  };
}
