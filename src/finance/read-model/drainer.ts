import type { Knex } from 'knex';
import { nowIso } from '../../clock';
import { outsideRequests } from '../../db/request-queries';
import type { Logger } from '../../logger';
import { nextTurn } from '../../turns';
import { bringCurrent, drainMarks } from './freshness';
import { settlePending } from './budget-watch';

/*
 * The background drain of marks (docs/stored-figures.md, "How the figures stay current"). Writes only
 * mark what they change; without the drain a burst of time logs left thousands of tasks marked until
 * reads found them, and the first breakdown to find one brought its whole project current on the
 * read's path: reads paid for the backlog. The drainer refreshes marked tasks behind the writes, a
 * bounded batch at a time (freshness.ts's drainMarks: at most `batch` tasks in one transaction, under
 * the project's refresh lock taken without waiting), with a turn of the event loop between batches,
 * so that reads keep finding stored figures and a breakdown of a task still marked is computed on the
 * fly without waiting for the drain. Projects whose stamp is out of date (a tree edit, a rate or member
 * change) are brought current whole, as a read would.
 *
 * It finds marks by looking at the marks' tables every `pollMs` while it has nothing queued, so marks
 * any instance left are drained (by one instance at a time: the refresh lock), and a breakdown that
 * found its project out of date wakes it at once (wakeDrainer). It belongs to no request: a client
 * leaving cancels none of its statements. At each look it also settles the budgets writes left
 * pending (budget-watch.ts's settlePending): a big project's, or one whose settle failed or whose
 * instance died before settling.
 */

/**
 * Tasks recomputed per transaction, their breakdown parts stored too (labor.ts's partsEagerly): about
 * half a MB of JSON at most. 25 rather than 50 halves the longest stretch a batch holds the event
 * loop, and drains as fast (BENCHMARKS.md, "A burst of writes").
 */
const BATCH = 25;

/**
 * Time logs of a project left waiting for its budget's next settle (they cannot reach a threshold)
 * that the drain lets gather before settling them: a settle recomputes each task they name once, so
 * the more gather, the less each costs; a log's statement sums them only while a threshold is left.
 */
const WAITING_LOGS = 2000;

/**
 * How long a big project's budget waits for its stored figures to be current (its marks drained)
 * before the drain computes its spent by the calculator instead (budget-watch.ts's storedShares).
 */
const PATIENCE_MS = 30_000;

/** How often the marks' tables are looked at when nothing is queued. */
const POLL_MS = 250;

export type Drainer = {
  /** A read found the project's stored figures out of date: drain it soon. */
  wake(teamId: string, projectId: string): void;
  /** Stops after the batch being drained (at shut-down), and resolves then. */
  stop(): Promise<void>;
};

/** The projects with marks (of tasks or inputs), whichever instance's writes left them. */
async function projectsWithMarks(db: Knex): Promise<{ team_id: string; project_id: string }[]> {
  const result = await db.raw('select team_id, project_id from stale_tasks union select team_id, project_id from stale_inputs');
  return result.rows;
}

/** The drainer of each connection pool, for the breakdowns that wake it (finance.router.ts). */
const drainers = new WeakMap<Knex, Drainer>();

/** Wakes `db`'s drainer for the project; false when none runs (tests without one refresh on the read's behalf). */
export function wakeDrainer(db: Knex, teamId: string, projectId: string): boolean {
  const drainer = drainers.get(db);
  drainer?.wake(teamId, projectId);
  return drainer !== undefined;
}

/** The share of the service's time the drainer takes while requests run and no read waits for it. */
const SHARE = 0.25;

/**
 * One drainer per instance. A refresh of a task costs about what a time log does, so a drainer going
 * flat out behind writes spread over many tasks would halve their throughput. It therefore takes all
 * the time it wants only when no request is being answered (`quiet`) or when a breakdown found a mark
 * since its last step (reads pay for the backlog then); otherwise, while writes run, it rests after
 * each batch three times as long as the batch took (`share`). BENCHMARKS.md, "A burst of writes".
 */
export function createDrainer(db: Knex, logger: Logger, options: { batch?: number; pollMs?: number; quiet?: () => boolean; share?: number } = {}): Drainer {
  const { batch = BATCH, pollMs = POLL_MS, quiet = () => true, share = SHARE } = options;
  /** Whether a read found a mark since the last step: reads pay for the backlog now, so no rest. */
  let readsWaiting = false;
  const queue = new Map<string, { teamId: string; projectId: string }>();
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  // A pause, cut short by a wake (a read waiting) or a stop.
  const rest = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    }).finally(() => (wakeUp = undefined));
  const keyOf = (teamId: string, projectId: string) => `${teamId}|${projectId}`;

  /** One step on one project; whether the project has more to drain now. */
  async function step(teamId: string, projectId: string): Promise<boolean> {
    const done = await drainMarks(db, teamId, projectId, batch);
    if (done.kind === 'whole') await bringCurrent(db, teamId, projectId, nowIso());
    // 'busy': another refresh of the project runs now; the next look at the marks finds what it leaves.
    return done.kind === 'drained' && done.more;
  }

  /**
   * Budgets writes left pending (a big project's whole recomputation, a settle that failed or never
   * ran; time logs that could not reach a threshold once WAITING_LOGS have gathered), at most once a
   * poll interval, backlog or not.
   */
  let settledAt = 0;
  async function settleBudgets(): Promise<void> {
    if (performance.now() - settledAt < pollMs) return;
    await settlePending(db, undefined, { waitingAtLeast: WAITING_LOGS, patienceMs: PATIENCE_MS }).catch((err: unknown) => logger.warn({ err }, 'settling pending budgets failed'));
    settledAt = performance.now();
  }

  async function work(): Promise<void> {
    while (!stopped) {
      if (queue.size === 0) {
        // A pause before each look (cut short by a wake): marks of tasks written again meanwhile (a task
        // logged to over and over) gather into one step rather than one refresh each.
        await rest(pollMs);
        if (stopped) break;
        try {
          for (const { team_id: teamId, project_id: projectId } of await projectsWithMarks(db)) queue.set(keyOf(teamId, projectId), { teamId, projectId });
        } catch (err) {
          logger.warn({ err }, 'could not look for marks to drain');
        }
        await settleBudgets();
        if (stopped) break;
        if (queue.size === 0) continue;
      }
      // A batch of each queued project in turn: one project's backlog does not hold the others up.
      let failed = false;
      for (const [key, { teamId, projectId }] of [...queue]) {
        if (stopped) break;
        let more = false;
        const started = performance.now();
        readsWaiting = false;
        try {
          more = await step(teamId, projectId);
        } catch (err) {
          failed = true;
          logger.warn({ err, projectId }, 'draining marks failed');
        }
        // A backlog goes on at once (after a turn of the event loop); what a step left is found by the next look.
        if (!more) queue.delete(key);
        if (quiet() || readsWaiting || share >= 1) await nextTurn();
        else await rest(((performance.now() - started) * (1 - share)) / share);
      }
      // Not straight back to a project that failed (the database gone, say): the next look after a pause.
      if (failed) queue.clear();
      if (!stopped) await settleBudgets();
    }
  }

  const running = outsideRequests(() => work());
  const drainer: Drainer = {
    wake(teamId, projectId) {
      readsWaiting = true;
      queue.set(keyOf(teamId, projectId), { teamId, projectId });
      wakeUp?.();
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      await running;
      if (drainers.get(db) === drainer) drainers.delete(db);
    },
  };
  drainers.set(db, drainer);
  return drainer;
}
