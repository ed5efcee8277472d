import type { Knex } from 'knex';
import { prepared } from '../../db/prepared';
import { CURSOR_BATCH, readInBatches } from '../../db/cursor';

/*
 * The finance queries. Each takes a scope (one task, a task and its descendants, or a whole project)
 * and answers in one round trip whatever the number of tasks, members or time logs: logged time comes
 * from the running totals in task_member_time, never from the logs themselves.
 */

export type Scope =
  | { kind: 'subtree'; projectId: string; taskId: string }
  | { kind: 'tasks'; projectId: string; taskIds: readonly string[] }
  | { kind: 'project'; projectId: string };

type Bindings = Record<string, string>;


/** A `scope (id)` CTE listing the non-archived task ids in scope. */
export function scopeCte(teamId: string, scope: Scope): { sql: string; bindings: Bindings } {
  const bindings: Bindings = { teamId, projectId: scope.projectId };
  if (scope.kind === 'project') {
    return {
      sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and archived_at is null)`,
      bindings,
    };
  }
  if (scope.kind === 'tasks') {
    // One parameter however many tasks (a refresh may name thousands).
    bindings.taskIds = scope.taskIds.join(',');
    return {
      sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId
          and id = any(string_to_array(:taskIds, ',')::uuid[]) and archived_at is null)`,
      bindings,
    };
  }
  bindings.taskId = scope.taskId;
  return {
    sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and id = :taskId and archived_at is null
        union
        select t.id from tasks t join scope s on t.team_id = :teamId and t.parent_task_id = s.id
        where t.archived_at is null)`,
    bindings,
  };
}

/** From how many tasks a read of theirs goes through a cursor (tests make it small, to go through many batches). */
export const readSettings = { batchedFrom: CURSOR_BATCH };

/** Whether a read of `count` tasks' rows goes through a cursor (readRows). */
export const manyTasks = (count: number) => count > readSettings.batchedFrom;

/**
 * A statement's rows: in batches through a cursor when they can be many (`many`: thousands of tasks'
 * rows, which the driver would otherwise parse in one stretch of the event loop), else in one answer.
 */
export async function readRows<T>(db: Knex, sql: string, bindings: Readonly<Record<string, unknown>>, many: boolean): Promise<T[]> {
  if (many) return readInBatches<T>(db, sql, bindings);
  return ((await db.raw(sql, bindings as Record<string, string>)) as { rows: T[] }).rows;
}

/** Each scope's statement runs as a named statement. */
export function named(statement: Knex.Raw, scope: Scope, name: string): Knex.Raw {
  return prepared(statement, `${name}_${scope.kind}`);
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
  /** The project's hours of a day when its rates are per day (docs/finance-rules.md R21), else null. */
  per_day: string | null;
  /** Whether the project has a bill rate entry, on its card or a member's (R25). */
  bills: boolean;
};

/**
 * SQL, one row: how the project :projectId prices (docs/finance-rules.md R21, R25): `per_day`, its hours
 * of a day when its rates are per day (text), else null; `bills`, whether it has a bill rate entry.
 */
export const PRICING = `select case when p.rate_unit = 'day' then p.hours_per_day::text end as per_day,
              exists (select 1 from project_rate_cards c where c.team_id = p.team_id and c.project_id = p.id and c.bill_rate is not null)
              or exists (select 1 from project_member_rates r where r.team_id = p.team_id and r.project_id = p.id and r.bill_rate is not null) as bills
       from projects p where p.team_id = :teamId and p.id = :projectId`;

/** SQL: the tasks of a scope (its `scope (id)` CTE), in creation order (tasksInScope). */
const tasksInScopeSql = (scopeSql: string) => `with recursive ${scopeSql}
     select t.id, t.name, t.project_id, t.parent_task_id, t.billable, t.estimated_hours, t.fixed_cost,
            t.status, t.priority, t.phase, t.created_at, pricing.per_day, pricing.bills
     from tasks t join scope s on t.team_id = :teamId and t.id = s.id
     cross join (${PRICING}) pricing
     order by t.created_at, t.id`;

/** One example of each kind of scope: the SQL of a scope depends on its kind only. */
const SCOPE_KINDS: Readonly<Record<Scope['kind'], Scope>> = {
  tasks: { kind: 'tasks', projectId: '', taskIds: [] },
  subtree: { kind: 'subtree', projectId: '', taskId: '' },
  project: { kind: 'project', projectId: '' },
};

/** A statement's SQL for each kind of scope, by name: `<name>_<kind>`, as named() prepares it. */
export function byScopeKind(name: string, sql: (scopeSql: string) => string): Record<string, string> {
  return Object.fromEntries(Object.values(SCOPE_KINDS).map((scope) => [`${name}_${scope.kind}`, sql(scopeCte('', scope).sql)]));
}

/** The statements of this file, by name (test/unit/sql-golden.test.ts). */
export const SCOPE_STATEMENTS = byScopeKind('finance_tasks', tasksInScopeSql);

export async function tasksInScope(db: Knex, teamId: string, scope: Scope): Promise<FinanceTaskRow[]> {
  const cte = scopeCte(teamId, scope);
  const sql = tasksInScopeSql(cte.sql);
  // A whole project's tasks (10,000 rows of the benchmark's largest, parsed in one go: 70-90 ms of
  // the event loop) are fetched in batches; a few tasks in one answer.
  if (scope.kind === 'project' || (scope.kind === 'tasks' && manyTasks(scope.taskIds.length))) return readInBatches<FinanceTaskRow>(db, sql, cte.bindings);
  const result = await named(db.raw(sql, cte.bindings), scope, 'finance_tasks');
  return result.rows;
}

/** Log days counted: a closed range of dates (YYYY-MM-DD), each end optional. */
export type DayRange = { from?: string; to?: string };
