import type { Knex } from 'knex';
import type { Actor } from '../auth/roles';
import { nowIso } from '../clock';
import type { ProjectRow } from '../projects/projects.repository';
import { applyRateCard, getProject } from '../projects/projects.service';
import type { RateCardBody } from '../projects/projects.schemas';
import { TaskFinance, TaskTotals, addTotals, rollUp } from './calculator';
import { financeOf, memberInputsByTask } from './labor';
import * as repo from './finance.repository';

/*
 * The dry run of a rate-card change (CONTRACT section 4, POST /rate-card/preview): in one transaction
 * that is always rolled back, every task's own figures are computed by the calculator, the change is
 * written by the same code as the PUT (applyRateCard), and every task is computed again. The
 * transaction reads one snapshot (repeatable read), so a write committed meanwhile by someone else
 * shows in neither side, and it does not take the project's write lock: other writes to the project
 * go on (a concurrent rate-card change waits for the preview's rows, at most as long as the preview).
 */

/** Tasks computed between two yields to the event loop. */
const SLICE = 200;

/** Every non-archived task's own figures at the instant `now`, in creation order. */
async function ownFigures(db: Knex, teamId: string, project: ProjectRow, now: string) {
  const scope: repo.Scope = { kind: 'project', projectId: project.id };
  const tasks = await repo.tasksInScope(db, teamId, scope);
  const membersByTask = memberInputsByTask(await repo.participantsInScope(db, teamId, scope, now));
  const finances = new Map<string, TaskFinance>();
  for (let from = 0; from < tasks.length; from += SLICE) {
    if (from > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const task of tasks.slice(from, from + SLICE)) finances.set(task.id, financeOf(task, membersByTask.get(task.id), project.currency));
  }
  return { tasks, finances };
}

/** The seven summed figures of the unfiltered project list's totals: its top-level rows' roll-ups added up. */
function projectTotals(figures: Awaited<ReturnType<typeof ownFigures>>): TaskTotals {
  const tree = figures.tasks.map((task) => ({
    id: task.id,
    parentId: task.parent_task_id,
    billable: task.billable,
    totals: (figures.finances.get(task.id) as TaskFinance).totals,
  }));
  const rolled = rollUp(tree, () => true);
  return addTotals(figures.tasks.filter((task) => task.parent_task_id === null).map((task) => rolled.get(task.id)?.totals as TaskTotals));
}

const presentTotals = (totals: TaskTotals) => ({
  estimated_hours: totals.estimatedHours,
  logged_hours: totals.loggedHours,
  estimated_labor_cost: totals.estimatedLaborCost,
  actual_labor_cost: totals.actualLaborCost,
  fixed_cost: totals.fixedCost,
  total_estimated_cost: totals.totalEstimatedCost,
  total_actual_cost: totals.totalActualCost,
});

const COSTS = ['estimatedLaborCost', 'actualLaborCost', 'totalEstimatedCost', 'totalActualCost'] as const;

const presentCosts = (totals: TaskTotals) => ({
  estimated_labor_cost: totals.estimatedLaborCost,
  actual_labor_cost: totals.actualLaborCost,
  total_estimated_cost: totals.totalEstimatedCost,
  total_actual_cost: totals.totalActualCost,
});

/** Thrown to roll the preview's transaction back once its answer is made. */
class RolledBack extends Error {
  constructor(readonly answer: unknown) {
    super('preview rolled back');
  }
}

export async function previewRateCard(db: Knex, actor: Actor, projectId: string, body: RateCardBody) {
  const now = nowIso();
  try {
    await db.transaction(
      async (trx) => {
        const project = await getProject(trx, actor.teamId, projectId);
        const before = await ownFigures(trx, actor.teamId, project, now);
        const effectiveFrom = await applyRateCard(trx, actor, project, body);
        const after = await ownFigures(trx, actor.teamId, project, now);
        const tasks = after.tasks.flatMap((task) => {
          const was = before.finances.get(task.id)?.totals as TaskTotals;
          const is = after.finances.get(task.id)?.totals as TaskTotals;
          if (COSTS.every((figure) => was[figure].equals(is[figure]))) return [];
          return [{ id: task.id, name: task.name, before: presentCosts(was), after: presentCosts(is) }];
        });
        throw new RolledBack({
          project_id: project.id,
          currency: project.currency,
          effective_from: effectiveFrom,
          project_totals: { before: presentTotals(projectTotals(before)), after: presentTotals(projectTotals(after)) },
          tasks,
        });
      },
      { isolationLevel: 'repeatable read' },
    );
  } catch (err) {
    if (err instanceof RolledBack) return err.answer;
    throw err;
  }
  throw new Error('The preview transaction committed');
}
