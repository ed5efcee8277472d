import type { Knex } from 'knex';
import type { Actor } from '../auth/roles';
import { nowIso } from '../clock';
import { jsonArrayInTurns } from '../json';
import { turns } from '../turns';
import type { ProjectRow } from '../projects/projects.repository';
import { applyRateCard, getProject } from '../projects/projects.service';
import type { RateCardBody } from '../projects/projects.schemas';
import { TaskFinance, TaskTotals, addTotals, rollUp } from './calculator';
import { bringCurrent } from './figures';
import { computeOwnFigures } from './labor';
import { presentTotals } from './present';
import { Decimal, ZERO, toDecimal } from './money';
import * as repo from './finance.repository';

/*
 * The dry run of a rate-card change (CONTRACT section 4, POST /rate-card/preview), in one transaction
 * that is always rolled back, reading one snapshot (repeatable read: a write committed meanwhile by
 * someone else shows in neither side). It does not take the project's write lock, so other writes to
 * the project go on (a concurrent rate-card change waits for the preview's rows, as long as it runs).
 *
 * 1. Inside a savepoint, the change is written by the same code as the PUT (applyRateCard); the roles
 *    whose rate on some day from the change's first day on differs are found; the tasks those rates
 *    cost (finance.repository's tasksCostedAt) are computed by the calculator: their figures after.
 *    The savepoint is rolled back.
 * 2. The same tasks' figures without the change: as stored (what their breakdowns answer) when the
 *    stored figures are current in the snapshot, else computed by the calculator. Every other task's
 *    figures are unchanged by construction (its lines and rates are the same days at the same rates).
 * 3. The project's totals before are the unfiltered list's (the stored roll-ups, brought current
 *    first; computed from every task if they are not current in the snapshot); after = before + the
 *    changed tasks' differences (only tasks under no archived ancestor count, as in the list).
 */

/** The own figures of the given tasks (or of every task) at the instant `now`, in creation order. */
async function ownFigures(db: Knex, teamId: string, project: ProjectRow, now: string, taskIds: readonly string[] | 'all') {
  const scope: repo.Scope = taskIds === 'all' ? { kind: 'project', projectId: project.id } : { kind: 'tasks', projectId: project.id, taskIds };
  if (taskIds !== 'all' && taskIds.length === 0) return { tasks: [], finances: new Map<string, TaskFinance>() };
  return computeOwnFigures(db, teamId, project.currency, scope, now);
}

/** Stored figures (a task's own, or sums of them) as task totals: what the calculator computed, read back. */
function storedTotals(stored: repo.ListedFigures): TaskTotals {
  return {
    estimatedHours: toDecimal(stored.estimated_hours),
    loggedHours: toDecimal(stored.logged_hours),
    estimatedLaborCost: toDecimal(stored.estimated_labor_cost),
    actualLaborCost: toDecimal(stored.actual_labor_cost),
    fixedCost: toDecimal(stored.fixed_cost),
    totalEstimatedCost: toDecimal(stored.total_estimated_cost),
    totalActualCost: toDecimal(stored.total_actual_cost),
  };
}

/** The own figures of the given tasks as they are: stored (what their breakdowns answer) when current, else computed. */
async function figuresBefore(db: Knex, teamId: string, project: ProjectRow, now: string, taskIds: readonly string[]) {
  const stored = await repo.storedOwnFigures(db, teamId, project.id, taskIds, now);
  if (!stored.current || stored.rows.length !== new Set(taskIds).size) return ownFigures(db, teamId, project, now, taskIds);
  const finances = new Map<string, TaskFinance>();
  const pace = turns();
  for (const row of stored.rows) {
    if (pace.due()) await pace.take();
    finances.set(row.task_id, { totals: storedTotals(row), members: [] });
  }
  return { finances };
}

const COSTS = ['estimatedLaborCost', 'actualLaborCost', 'totalEstimatedCost', 'totalActualCost'] as const;
const FIGURES = ['estimatedHours', 'loggedHours', 'estimatedLaborCost', 'actualLaborCost', 'fixedCost', 'totalEstimatedCost', 'totalActualCost'] as const;

const presentCosts = (totals: TaskTotals) => ({
  estimated_labor_cost: totals.estimatedLaborCost,
  actual_labor_cost: totals.actualLaborCost,
  total_estimated_cost: totals.totalEstimatedCost,
  total_actual_cost: totals.totalActualCost,
});

/** The unfiltered list's totals: stored and current, or from every task's own figures. */
async function projectTotals(db: Knex, teamId: string, project: ProjectRow, now: string): Promise<TaskTotals> {
  const stored = await repo.storedProjectSums(db, teamId, project.id, now);
  if (stored.current) return storedTotals(stored);
  const all = await ownFigures(db, teamId, project, now, 'all');
  const tree = all.tasks.map((task) => ({
    id: task.id,
    parentId: task.parent_task_id,
    billable: task.billable,
    totals: (all.finances.get(task.id) as TaskFinance).totals,
  }));
  const rolled = await rollUp(tree, () => true);
  return addTotals(all.tasks.filter((task) => task.parent_task_id === null).map((task) => rolled.get(task.id)?.totals as TaskTotals));
}

/** The ids of the non-archived tasks of the project under no archived ancestor (what the list counts). */
async function listedTaskIds(db: Knex, teamId: string, projectId: string): Promise<Set<string>> {
  const tasks = await repo.tasksInScope(db, teamId, { kind: 'project', projectId });
  const live = new Map(tasks.map((task) => [task.id, task.parent_task_id]));
  const listed = new Set<string>();
  const isListed = (id: string, depth = 0): boolean => {
    if (listed.has(id)) return true;
    const parent = live.get(id);
    if (parent === undefined || depth > tasks.length) return false;
    const ok = parent === null || isListed(parent, depth + 1);
    if (ok) listed.add(id);
    return ok;
  };
  const pace = turns();
  for (const task of tasks) {
    if (pace.due()) await pace.take();
    isListed(task.id);
  }
  return listed;
}

/** Thrown to roll a transaction or a savepoint back once its result is known. */
class RolledBack<T> extends Error {
  constructor(readonly result: T) {
    super('rolled back');
  }
}

async function rolledBack<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>, config?: Knex.TransactionConfig): Promise<T> {
  try {
    await db.transaction(async (trx) => {
      throw new RolledBack(await work(trx));
    }, config);
  } catch (err) {
    if (err instanceof RolledBack) return err.result as T;
    throw err;
  }
  throw new Error('A rolled-back transaction committed');
}

export async function previewRateCard(db: Knex, actor: Actor, projectId: string, body: RateCardBody) {
  const now = nowIso();
  // The stored totals current first, so the snapshot below usually reads them instead of computing every task.
  await getProject(db, actor.teamId, projectId);
  await bringCurrent(db, actor.teamId, projectId, now);
  return rolledBack(
    db,
    async (trx) => {
      const project = await getProject(trx, actor.teamId, projectId);
      // 1. The change, in a savepoint: the figures after it of the tasks it can change.
      const changed = await rolledBack(trx, async (savepoint) => {
        const { effectiveFrom, changedRoles: roles } = await applyRateCard(savepoint, actor, project, body);
        const costed = await repo.tasksCostedAt(savepoint, actor.teamId, projectId, roles, effectiveFrom, now);
        const taskIds = [...new Set([...costed.logged, ...costed.assigned])];
        return { effectiveFrom, taskIds, after: await ownFigures(savepoint, actor.teamId, project, now, taskIds) };
      });
      // 2. The same tasks without it: their stored figures when current in this snapshot, else computed.
      const before = await figuresBefore(trx, actor.teamId, project, now, changed.taskIds);
      const listed = await listedTaskIds(trx, actor.teamId, projectId);
      const totalsBefore = await projectTotals(trx, actor.teamId, project, now);
      const delta = Object.fromEntries(FIGURES.map((figure) => [figure, ZERO])) as Record<(typeof FIGURES)[number], Decimal>;
      const tasks = [];
      const pace = turns();
      for (const task of changed.after.tasks) {
        if (pace.due()) await pace.take();
        const was = before.finances.get(task.id)?.totals as TaskTotals;
        const is = changed.after.finances.get(task.id)?.totals as TaskTotals;
        if (listed.has(task.id)) for (const figure of FIGURES) delta[figure] = delta[figure].plus(is[figure]).minus(was[figure]);
        if (COSTS.every((figure) => was[figure].equals(is[figure]))) continue;
        tasks.push({ id: task.id, name: task.name, before: presentCosts(was), after: presentCosts(is) });
      }
      const totalsAfter = Object.fromEntries(FIGURES.map((figure) => [figure, totalsBefore[figure].plus(delta[figure])])) as TaskTotals;
      return {
        project_id: project.id,
        currency: project.currency,
        effective_from: changed.effectiveFrom,
        project_totals: { before: presentTotals(totalsBefore), after: presentTotals(totalsAfter) },
        // Thousands of tasks: rendered a slice at a time, not in one go when the response is sent.
        tasks: await jsonArrayInTurns(tasks),
      };
    },
    { isolationLevel: 'repeatable read' },
  );
}
