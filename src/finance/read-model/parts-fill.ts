import type { Knex } from 'knex';
import { nowIso } from '../../clock';
import { turns } from '../../turns';
import type { Logger } from '../../logger';
import { breakdownParts, computeOwnFigures } from './labor';
import { Scope } from '../inputs/scope';
import { PartsToStore, projectsWithoutParts, storeBreakdownParts, tasksWithoutParts } from './breakdown.sql';

/*
 * Breakdown parts filled in behind project-wide refreshes. A refresh of many tasks (a rate or role
 * change on a large project) stores their figures only, and a change to what members show (a name, a
 * role today) makes every stored part of the project out of date at once (labor.ts, freshness.ts): each
 * task's next breakdown then computes its parts on the fly, some twenty times the work of reading them.
 * The filler computes them in the background, a batch at a time with pauses between, so breakdowns
 * read from stored parts again soon after such a change whichever tasks are asked for.
 *
 * It stores nothing a read could not have stored: each batch is taken only while the project's stamp
 * is current (tasks with a mark left out), computed by the same code as a breakdown read with the
 * currency read with that stamp, and stored only into labor rows that no refresh rewrote meanwhile
 * (breakdown.sql.ts's storeBreakdownParts). A part it did not fill is computed at its task's next
 * read, as before.
 */

const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** Tasks computed and stored at a time (a batch of the benchmark's largest tasks is about a MB of JSON). */
const BATCH = 50;

/** What a fill did: how many tasks' parts it stored, and whether it went through the whole project. */
export type FillResult = { stored: number; complete: boolean };

/**
 * Computes and stores the breakdown parts of every task of the project that has none of the current
 * parts version, in batches by task id. It stops early, incomplete, when the project's figures are not
 * current (a write since the last refresh: the filler goes on after the next one) or when `between`,
 * run after each batch, says so. Each batch is computed with the currency read in the statement that
 * found the project current and its rows' versions.
 */
export async function fillBreakdownParts(
  db: Knex,
  teamId: string,
  projectId: string,
  between: () => Promise<boolean> = async () => true,
): Promise<FillResult> {
  let after = FIRST_ID;
  let stored = 0;
  for (;;) {
    const now = nowIso();
    const due = await tasksWithoutParts(db, teamId, projectId, now, after, BATCH);
    if (!due.current || due.currency === undefined) return { stored, complete: false };
    const last = due.tasks[due.tasks.length - 1];
    if (!last) return { stored, complete: true };
    const scope: Scope = { kind: 'tasks', projectId, taskIds: due.tasks.map((task) => task.task_id) };
    const { finances } = await computeOwnFigures(db, teamId, due.currency, scope, now, {}, true);
    const parts: PartsToStore[] = [];
    const pace = turns();
    for (const task of due.tasks) {
      if (pace.due()) await pace.take();
      const finance = finances.get(task.task_id);
      if (finance) parts.push({ ...task, ...breakdownParts(finance) });
    }
    stored += await storeBreakdownParts(db, teamId, parts);
    after = last.task_id;
    if (!(await between())) return { stored, complete: false };
  }
}

export type PartsFiller = {
  /**
   * What the filler is told of each committed refresh (freshness.ts's onRefreshed): one that left parts
   * to compute, or one of a project whose fill a write interrupted or that failed, schedules a fill.
   */
  refreshed(teamId: string, projectId: string, partsLeft: boolean): void;
  /** Schedules every project whose stored parts are missing or out of date (at start-up). */
  scheduleOutdated(): Promise<void>;
  /** Resolves when nothing is scheduled or running. */
  idle(): Promise<void>;
  /** Stops after the batch being computed (at shut-down), and resolves then. */
  stop(): Promise<void>;
};

/**
 * One filler per instance: projects are filled one at a time, in the order they were asked for. It is
 * background work: each batch waits until `quiet()` says no request is being answered (checked every
 * `pollMs`), so that requests keep the service first.
 */
export function createPartsFiller(db: Knex, logger: Logger, options: { quiet?: () => boolean; pollMs?: number } = {}): PartsFiller {
  const { quiet = () => true, pollMs = 20 } = options;
  const queue = new Map<string, { teamId: string; projectId: string; again: boolean }>();
  /** Projects whose last fill stopped before the end: a write came first, or it failed. */
  const unfinished = new Set<string>();
  let running: Promise<void> | undefined;
  let stopped = false;
  const sleep = () => new Promise<void>((resolve) => setTimeout(resolve, pollMs));
  const pause = async () => {
    do await sleep();
    while (!stopped && !quiet());
    return !stopped;
  };
  const keyOf = (teamId: string, projectId: string) => `${teamId}|${projectId}`;

  async function fill(item: { teamId: string; projectId: string }): Promise<boolean> {
    try {
      if (!(await pause())) return false;
      const result = await fillBreakdownParts(db, item.teamId, item.projectId, pause);
      logger.debug({ projectId: item.projectId, ...result }, 'breakdown parts filled');
      return result.complete;
    } catch (err) {
      logger.warn({ err, projectId: item.projectId }, 'filling breakdown parts failed');
      return false;
    }
  }

  async function work(): Promise<void> {
    for (let next = queue.values().next(); !next.done && !stopped; next = queue.values().next()) {
      const item = next.value;
      const key = keyOf(item.teamId, item.projectId);
      item.again = false;
      const complete = await fill(item);
      if (complete) unfinished.delete(key);
      else unfinished.add(key);
      queue.delete(key);
      // Asked for again while it was being filled: at the end of the queue, behind those asked for meanwhile.
      if (item.again) queue.set(key, item);
    }
  }

  function start() {
    if (running || stopped) return;
    running = work().finally(() => {
      running = undefined;
      // Asked for between the loop's last look at the queue and now.
      if (queue.size > 0) start();
    });
  }

  /** Fills the project's parts soon (once, however often it is asked meanwhile; again if asked while filling). */
  function schedule(teamId: string, projectId: string) {
    const key = keyOf(teamId, projectId);
    const queued = queue.get(key);
    if (queued) queued.again = true;
    else queue.set(key, { teamId, projectId, again: false });
    start();
  }

  return {
    refreshed(teamId, projectId, partsLeft) {
      if (partsLeft || unfinished.has(keyOf(teamId, projectId))) schedule(teamId, projectId);
    },
    async scheduleOutdated() {
      for (const { team_id: teamId, project_id: projectId } of await projectsWithoutParts(db)) schedule(teamId, projectId);
    },
    async idle() {
      while (running) await running;
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}
