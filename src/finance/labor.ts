import type { Knex } from 'knex';
import { groupBy } from '../group-by';
import { MemberInput, TaskFinance, computeTaskFinance } from './calculator';
import { toDecimal } from './money';
import * as repo from './finance.repository';

/*
 * Each task's own labor figures are computed by the calculator and stored (task_labor), so a project
 * list reads one row per task instead of recomputing every member of every task. Every write that can
 * change them refreshes them in its own transaction:
 *   - a task's estimate or assignees, a time log added or deleted: that task;
 *   - the rate card, a member's role in the project, the project's currency: every task of the project;
 *   - a member's name (it orders the estimate split): the tasks it is assigned to.
 * Callers hold the project row lock: 'share' to refresh some tasks, 'update' to refresh all, so a
 * refresh never reads what a concurrent one is changing.
 * Rates are read as in force today; all rate-card rows take effect from 1970 for now. Dated rates
 * will also need a refresh of the project on the day a rate takes effect.
 */

export function memberInputsByTask(rows: readonly repo.ParticipantRow[]): Map<string, MemberInput[]> {
  return groupBy(
    rows,
    (row) => row.task_id,
    (row): MemberInput => ({
      teamMemberId: row.team_member_id,
      name: row.name,
      avatarUrl: row.avatar_url,
      jobRole: row.job_role,
      hourlyRate: row.hourly_rate === null ? null : toDecimal(row.hourly_rate),
      isAssignee: row.is_assignee,
      loggedSeconds: Number(row.logged_seconds),
    }),
  );
}

export function financeOf(
  task: { estimated_hours: string; fixed_cost: string },
  members: readonly MemberInput[] | undefined,
  currency: string,
): TaskFinance {
  return computeTaskFinance(
    { estimatedHours: toDecimal(task.estimated_hours), fixedCost: toDecimal(task.fixed_cost), members: members ?? [] },
    currency,
  );
}

export async function refreshTaskLabor(
  db: Knex,
  teamId: string,
  project: { id: string; currency: string },
  taskIds: readonly string[] | 'all',
): Promise<void> {
  if (taskIds !== 'all' && taskIds.length === 0) return;
  const scope: repo.Scope =
    taskIds === 'all' ? { kind: 'project', projectId: project.id } : { kind: 'tasks', projectId: project.id, taskIds: [...new Set(taskIds)] };
  const tasks = await repo.tasksInScope(db, teamId, scope);
  const membersByTask = memberInputsByTask(await repo.participantsInScope(db, teamId, scope));
  const rows = tasks.map((task) => {
    const { totals } = financeOf(task, membersByTask.get(task.id), project.currency);
    return {
      task_id: task.id,
      estimated_labor_cost: totals.estimatedLaborCost.toFixed(),
      logged_hours: totals.loggedHours.toFixed(),
      actual_labor_cost: totals.actualLaborCost.toFixed(),
    };
  });
  await repo.upsertTaskLabor(db, teamId, project.id, rows);
}
