import type { Knex } from 'knex';
import { prepared } from '../db/prepared';
import { RATES_IN_FORCE } from '../projects/projects.repository';

/*
 * The finance queries. Each takes a scope (one task, a task and its descendants, or a whole project)
 * and answers in one round trip whatever the number of tasks, members or time logs: logged time comes
 * from the running totals in task_member_time, never from the logs themselves.
 */

export type Scope =
  | { kind: 'task'; projectId: string; taskId: string }
  | { kind: 'subtree'; projectId: string; taskId: string }
  | { kind: 'tasks'; projectId: string; taskIds: readonly string[] }
  | { kind: 'project'; projectId: string };

type Bindings = Record<string, string>;


/** A `scope (id)` CTE listing the non-archived task ids in scope. */
function scopeCte(teamId: string, scope: Scope): { sql: string; bindings: Bindings } {
  const bindings: Bindings = { teamId, projectId: scope.projectId };
  if (scope.kind === 'project') {
    return {
      sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and archived_at is null)`,
      bindings,
    };
  }
  if (scope.kind === 'tasks') {
    scope.taskIds.forEach((id, index) => (bindings[`task${index}`] = id));
    const list = scope.taskIds.map((_, index) => `:task${index}`).join(', ');
    return {
      sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and id in (${list}) and archived_at is null)`,
      bindings,
    };
  }
  bindings.taskId = scope.taskId;
  if (scope.kind === 'task') {
    return {
      sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and id = :taskId and archived_at is null)`,
      bindings,
    };
  }
  return {
    sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and id = :taskId and archived_at is null
        union
        select t.id from tasks t join scope s on t.team_id = :teamId and t.parent_task_id = s.id
        where t.archived_at is null)`,
    bindings,
  };
}

/** Scopes of a fixed shape run as named statements; a list of task ids varies the SQL text, so it cannot. */
function named(statement: Knex.Raw, scope: Scope, name: string): Knex.Raw {
  return scope.kind === 'tasks' ? statement : prepared(statement, `${name}_${scope.kind}`);
}

/** Row shape: one task in scope. */
export type FinanceTaskRow = {
  id: string;
  name: string;
  project_id: string;
  parent_task_id: string | null;
  billable: boolean;
  estimated_hours: string;
  fixed_cost: string;
  status: string | null;
  priority: string | null;
  phase: string | null;
  created_at: Date;
};

export async function tasksInScope(db: Knex, teamId: string, scope: Scope): Promise<FinanceTaskRow[]> {
  const cte = scopeCte(teamId, scope);
  const statement = db.raw(
    `with recursive ${cte.sql}
     select t.id, t.name, t.project_id, t.parent_task_id, t.billable, t.estimated_hours, t.fixed_cost,
            t.status, t.priority, t.phase, t.created_at
     from tasks t join scope s on t.team_id = :teamId and t.id = s.id
     order by t.created_at, t.id`,
    cte.bindings,
  );
  const result = await named(statement, scope, 'finance_tasks');
  return result.rows;
}

/** Row shape: one person taking part in one task in scope (assignee, logger, or both). */
export type ParticipantRow = {
  task_id: string;
  team_member_id: string;
  name: string;
  avatar_url: string | null;
  is_assignee: boolean;
  logged_seconds: number;
  job_role: string | null;
  hourly_rate: string | null;
};

export async function participantsInScope(db: Knex, teamId: string, scope: Scope): Promise<ParticipantRow[]> {
  const cte = scopeCte(teamId, scope);
  const statement = db.raw(
    `with recursive ${cte.sql},
     participant (task_id, team_member_id) as (
       select a.task_id, a.team_member_id from task_assignees a join scope s on a.team_id = :teamId and a.task_id = s.id
       union
       select x.task_id, x.team_member_id from task_member_time x join scope s on x.team_id = :teamId and x.task_id = s.id
       where x.total_seconds > 0
     ),
     ${RATES_IN_FORCE}
     select p.task_id, p.team_member_id, m.name, m.avatar_url,
            (a.task_id is not null) as is_assignee,
            coalesce(x.total_seconds, 0) as logged_seconds,
            jr.name as job_role, r.hourly_rate
     from participant p
     join team_members m on m.team_id = :teamId and m.id = p.team_member_id
     left join task_assignees a on a.team_id = :teamId and a.task_id = p.task_id and a.team_member_id = p.team_member_id
     left join task_member_time x on x.team_id = :teamId and x.task_id = p.task_id and x.team_member_id = p.team_member_id
     left join project_members pm on pm.team_id = :teamId and pm.project_id = :projectId and pm.team_member_id = p.team_member_id
     left join job_roles jr on jr.team_id = :teamId and jr.id = pm.job_role_id
     left join rate r on r.job_role_id = pm.job_role_id`,
    cte.bindings,
  );
  const result = await named(statement, scope, 'finance_participants');
  return result.rows;
}

/** Row shape: one non-archived task of a project with its own (not rolled-up) labor figures. */
export type TaskFiguresRow = Omit<FinanceTaskRow, 'created_at'> & {
  estimated_labor_cost: string;
  logged_hours: string;
  actual_labor_cost: string;
};

/** Every non-archived task of a project with its stored labor figures (see labor.ts), in creation order. */
export async function taskFiguresInProject(db: Knex, teamId: string, projectId: string): Promise<TaskFiguresRow[]> {
  const statement = db.raw(
    `select t.id, t.name, t.project_id, t.parent_task_id, t.billable, t.estimated_hours, t.fixed_cost,
            t.status, t.priority, t.phase,
            coalesce(l.estimated_labor_cost, 0) as estimated_labor_cost,
            coalesce(l.logged_hours, 0) as logged_hours,
            coalesce(l.actual_labor_cost, 0) as actual_labor_cost
     from tasks t
     left join task_labor l on l.team_id = t.team_id and l.task_id = t.id
     where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
     order by t.created_at, t.id`,
    { teamId, projectId },
  );
  const result = await prepared(statement, 'finance_task_figures');
  return result.rows;
}

export type TaskLaborRow = {
  task_id: string;
  estimated_labor_cost: string;
  logged_hours: string;
  actual_labor_cost: string;
};

/** Stores tasks' labor figures, replacing what was there. */
export async function upsertTaskLabor(db: Knex, teamId: string, projectId: string, rows: readonly TaskLaborRow[]): Promise<void> {
  const BATCH = 2000; // 6 parameters a row, well under PostgreSQL's 65,535
  for (let from = 0; from < rows.length; from += BATCH) {
    await db('task_labor')
      .insert(rows.slice(from, from + BATCH).map((row) => ({ team_id: teamId, project_id: projectId, ...row })))
      .onConflict(['team_id', 'task_id'])
      .merge(['estimated_labor_cost', 'logged_hours', 'actual_labor_cost']);
  }
}

/** Row shape: one assignee of one non-archived task of a project, with its role and rate there. */
export type AssigneeRow = {
  task_id: string;
  team_member_id: string;
  name: string;
  avatar_url: string | null;
  job_role: string | null;
  hourly_rate: string | null;
};

export async function assigneesInProject(db: Knex, teamId: string, projectId: string): Promise<AssigneeRow[]> {
  const statement = db.raw(
    `with ${RATES_IN_FORCE}
     select a.task_id, a.team_member_id, m.name, m.avatar_url, jr.name as job_role, r.hourly_rate
     from task_assignees a
     join tasks t on t.team_id = :teamId and t.id = a.task_id and t.project_id = :projectId and t.archived_at is null
     join team_members m on m.team_id = :teamId and m.id = a.team_member_id
     left join project_members pm on pm.team_id = :teamId and pm.project_id = :projectId and pm.team_member_id = a.team_member_id
     left join job_roles jr on jr.team_id = :teamId and jr.id = pm.job_role_id
     left join rate r on r.job_role_id = pm.job_role_id
     where a.team_id = :teamId`,
    { teamId, projectId },
  );
  const result = await prepared(statement, 'finance_assignees');
  return result.rows;
}
