import type { Knex } from 'knex';
import { groupBy } from '../group-by';
import { toJson } from '../http/respond';
import { findProject } from '../projects/projects.repository';
import { MemberInput, TaskFinance, computeTaskFinance } from './calculator';
import { toDecimal } from './money';
import { presentAssignees, presentGroups, presentMembers } from './present';
import * as repo from './finance.repository';

/*
 * Each task's own labor figures are computed by the calculator and stored (task_labor) with the parts
 * of its breakdown that depend on its members (the member entries, the role groups, the assignees as a
 * list row shows them, as JSON text), so a breakdown reads one row and a project list one row per task
 * instead of recomputing every member of every task. Every write that can change them refreshes them
 * in its own transaction:
 *   - a task's estimate or assignees, a time log added or deleted: that task;
 *   - the rate card, a member's role in the project, the project's currency: every task of the project;
 *   - a member's name or avatar: the tasks it is assigned to or has logged time on.
 * Each refresh ends with the roll-ups of the refreshed tasks and their ancestors (finance.repository's
 * refreshRollups); writes that change a task's own figures or place without its members (fixed cost,
 * billable, parent, archiving) refresh the roll-ups themselves.
 * Callers hold the project row lock 'update': writes to one project are serialised, so a refresh (and a
 * roll-up, which sums whole subtrees) never reads what a concurrent one is changing.
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
    const members = membersByTask.get(task.id) ?? [];
    const finance = financeOf(task, members, project.currency);
    return {
      task_id: task.id,
      estimated_labor_cost: finance.totals.estimatedLaborCost.toFixed(),
      logged_hours: finance.totals.loggedHours.toFixed(),
      actual_labor_cost: finance.totals.actualLaborCost.toFixed(),
      members_json: toJson(presentMembers(finance.members)),
      grouped_members_json: toJson(presentGroups(finance.members)),
      assignees_json: toJson(presentAssignees(members)),
    };
  });
  await repo.upsertTaskLabor(db, teamId, project.id, rows);
  await repo.refreshRollups(db, teamId, project.id, taskIds === 'all' ? 'all' : tasks.map((task) => task.id));
}

/**
 * Refreshes every project holding a non-archived task whose stored figures are missing or were left
 * empty by a migration (see migrations/..._002_stored_breakdowns.ts); one transaction per project,
 * under its row lock. Returns how many projects it refreshed (0 on an up-to-date database).
 */
export async function refreshStaleLabor(db: Knex): Promise<number> {
  const stale: { team_id: string; project_id: string }[] = await db('tasks as t')
    .leftJoin('task_labor as l', function joinLabor() {
      this.on('l.team_id', 't.team_id').andOn('l.task_id', 't.id');
    })
    .whereNull('t.archived_at')
    .where((q) => q.whereNull('l.task_id').orWhereNull('l.members_json').orWhereNull('l.children').orWhereNull('l.list_row_json'))
    .distinct('t.team_id', 't.project_id')
    .orderBy(['t.team_id', 't.project_id']);
  for (const { team_id: teamId, project_id: projectId } of stale) await refreshProjectLabor(db, teamId, projectId);
  return stale.length;
}

/** Recomputes and stores everything labor.ts stores for one project's tasks, in one transaction under its row lock. */
export async function refreshProjectLabor(db: Knex, teamId: string, projectId: string): Promise<void> {
  await db.transaction(async (trx) => {
    const project = await findProject(trx, teamId, projectId, 'update');
    if (project) await refreshTaskLabor(trx, teamId, project, 'all');
  });
}
