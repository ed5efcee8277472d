import type { Knex } from 'knex';
import { nowIso } from '../clock';
import { turns } from '../turns';
import type { Logger } from '../logger';
import { findProject } from '../projects/projects.repository';
import { breakdownParts, computeOwnFigures } from './labor';
import * as repo from './finance.repository';

/*
 * Breakdown parts filled in behind project-wide refreshes. A refresh of many tasks (a rate or role
 * change on a large project) stores their figures only, and a change to what members show (a name, a
 * role today) makes every stored part of the project out of date at once (labor.ts, figures.ts): each
 * task's next breakdown then computes its parts on the fly, some twenty times the work of reading them.
 * The filler computes them in the background, a batch at a time with pauses between, so breakdowns
 * read from stored parts again soon after such a change whichever tasks are asked for.
 *
 * It stores nothing a read could not have stored: each batch is taken only while the project's figures
 * are current, computed by the same code as a breakdown read, and stored only into labor rows that no
 * refresh rewrote meanwhile (finance.repository's storeBreakdownParts). It is an optimisation only: a
 * part it did not fill is computed at its task's next read, as before.
 */

const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** Tasks computed and stored at a time (a batch of the benchmark's largest tasks is about a MB of JSON). */
const BATCH = 50;

/**
 * Computes and stores the breakdown parts of every task of the project that has none of the current
 * parts version, in batches by task id; stops early when the project's figures are not current (the
 * refresh that follows asks again). `between` runs after each batch and says whether to go on.
 * Returns how many it stored.
 */
export async function fillBreakdownParts(
  db: Knex,
  teamId: string,
  projectId: string,
  between: () => Promise<boolean> = async () => true,
): Promise<number> {
  const project = await findProject(db, teamId, projectId);
  if (!project) return 0;
  let after = FIRST_ID;
  let stored = 0;
  for (;;) {
    const now = nowIso();
    const due = await repo.tasksWithoutParts(db, teamId, projectId, now, after, BATCH);
    const last = due[due.length - 1];
    if (!last) return stored;
    const scope: repo.Scope = { kind: 'tasks', projectId, taskIds: due.map((task) => task.task_id) };
    const { finances } = await computeOwnFigures(db, teamId, project.currency, scope, now, {}, true);
    const parts: repo.PartsToStore[] = [];
    const pace = turns();
    for (const task of due) {
      if (pace.due()) await pace.take();
      const finance = finances.get(task.task_id);
      if (finance) parts.push({ ...task, ...breakdownParts(finance) });
    }
    stored += await repo.storeBreakdownParts(db, teamId, parts);
    after = last.task_id;
    if (!(await between())) return stored;
  }
}

export type PartsFiller = {
  /** Fills the project's parts soon (once, however often it is asked meanwhile; again if asked while filling). */
  schedule(teamId: string, projectId: string): void;
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
  let running: Promise<void> | undefined;
  let stopped = false;
  const sleep = () => new Promise<void>((resolve) => setTimeout(resolve, pollMs));
  const pause = async () => {
    do await sleep();
    while (!stopped && !quiet());
    return !stopped;
  };

  async function work(): Promise<void> {
    for (let next = queue.values().next(); !next.done && !stopped; next = queue.values().next()) {
      const item = next.value;
      item.again = false;
      try {
        const stored = (await pause()) ? await fillBreakdownParts(db, item.teamId, item.projectId, pause) : 0;
        logger.debug({ projectId: item.projectId, stored }, 'breakdown parts filled');
      } catch (err) {
        logger.warn({ err, projectId: item.projectId }, 'filling breakdown parts failed');
      }
      if (!item.again) queue.delete(`${item.teamId}|${item.projectId}`);
    }
  }

  function schedule(teamId: string, projectId: string) {
    const key = `${teamId}|${projectId}`;
    const queued = queue.get(key);
    if (queued) queued.again = true;
    else queue.set(key, { teamId, projectId, again: false });
    start();
  }

  function start() {
    if (running || stopped) return;
    running = work().finally(() => {
      running = undefined;
      // Asked for between the loop's last look at the queue and now.
      if (queue.size > 0) start();
    });
  }

  return {
    schedule,
    async scheduleOutdated() {
      for (const { team_id: teamId, project_id: projectId } of await repo.projectsWithoutParts(db)) schedule(teamId, projectId);
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
