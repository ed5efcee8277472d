import type { Knex } from 'knex';

/*
 * The finance queries. Each takes a scope (one task, a task and its descendants, or a whole project)
 * and answers in one round trip whatever the number of tasks, members or time logs: logged time comes
 * from the running totals in task_member_time, never from the logs themselves.
 */

export type Scope =
  | { kind: 'task'; projectId: string; taskId: string }
  | { kind: 'subtree'; projectId: string; taskId: string }
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
  const result = await db.raw(
    `with recursive ${cte.sql}
     select t.id, t.name, t.project_id, t.parent_task_id, t.billable, t.estimated_hours, t.fixed_cost,
            t.status, t.priority, t.phase, t.created_at
     from tasks t join scope s on t.team_id = :teamId and t.id = s.id
     order by t.created_at, t.id`,
    cte.bindings,
  );
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
  const result = await db.raw(
    `with recursive ${cte.sql},
     participant (task_id, team_member_id) as (
       select a.task_id, a.team_member_id from task_assignees a join scope s on a.team_id = :teamId and a.task_id = s.id
       union
       select x.task_id, x.team_member_id from task_member_time x join scope s on x.team_id = :teamId and x.task_id = s.id
       where x.total_seconds > 0
     ),
     rate (job_role_id, hourly_rate) as (
       select distinct on (job_role_id) job_role_id, hourly_rate from project_rate_cards
       where team_id = :teamId and project_id = :projectId and effective_from <= current_date
       order by job_role_id, effective_from desc
     )
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
  return result.rows;
}
