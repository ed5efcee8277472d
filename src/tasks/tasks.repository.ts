import type { Knex } from 'knex';
import { prepared } from '../db/prepared';
import { ListOrder, Page, PageRequest, pagedQuery, takePage } from '../http/paging';

export type TaskRow = {
  id: string;
  project_id: string;
  parent_task_id: string | null;
  name: string;
  estimated_hours: string;
  billable: boolean;
  fixed_cost: string;
  status: string | null;
  priority: string | null;
  phase: string | null;
  finance_version: number;
  created_at: Date;
  updated_at: Date;
  /** From the owning project. */
  currency: string;
};

const TASK_COLUMNS = [
  't.id', 't.project_id', 't.parent_task_id', 't.name', 't.estimated_hours', 't.billable', 't.fixed_cost',
  't.status', 't.priority', 't.phase', 't.finance_version', 't.created_at', 't.updated_at', 'p.currency',
];

export type TaskFields = Partial<{
  name: string;
  estimated_hours: string;
  billable: boolean;
  fixed_cost: string;
  parent_task_id: string | null;
  status: string | null;
  priority: string | null;
  phase: string | null;
}>;

/**
 * A non-archived task of the team, with its project's currency; `lock` holds the row until commit, FOR NO
 * KEY UPDATE: a task's id never changes, and the stronger FOR UPDATE would wait for the key-share locks a
 * refresh's writes of task_labor take on the task (their foreign key), the refresh waiting on this write's
 * project row meanwhile: a deadlock.
 */
export async function findTask(db: Knex, teamId: string, id: string, lock = false): Promise<TaskRow | undefined> {
  const query = db('tasks as t')
    .join('projects as p', function joinProject() {
      this.on('p.team_id', 't.team_id').andOn('p.id', 't.project_id');
    })
    .where({ 't.team_id': teamId, 't.id': id })
    .whereNull('t.archived_at')
    .first(TASK_COLUMNS);
  return lock ? prepared(query.forNoKeyUpdate('t'), 'find_task_for_update') : prepared(query, 'find_task');
}

export async function insertTask(db: Knex, teamId: string, projectId: string, fields: TaskFields & { name: string }) {
  const [row] = await db('tasks').insert({ team_id: teamId, project_id: projectId, ...fields }).returning('id');
  return row.id as string;
}

export async function updateTask(db: Knex, teamId: string, id: string, fields: TaskFields): Promise<void> {
  await db('tasks').where({ team_id: teamId, id }).update({ ...fields, updated_at: db.fn.now() });
}

export async function assigneeIds(db: Knex, teamId: string, taskId: string): Promise<string[]> {
  const rows: { team_member_id: string }[] = await db('task_assignees as a')
    .join('team_members as m', function joinMember() {
      this.on('m.team_id', 'a.team_id').andOn('m.id', 'a.team_member_id');
    })
    .where({ 'a.team_id': teamId, 'a.task_id': taskId })
    .select('a.team_member_id')
    .orderBy([{ column: 'm.name' }, { column: 'a.team_member_id' }]);
  return rows.map((r) => r.team_member_id);
}

export async function replaceAssignees(db: Knex, teamId: string, taskId: string, memberIds: readonly string[]): Promise<void> {
  await db('task_assignees').where({ team_id: teamId, task_id: taskId }).delete();
  if (memberIds.length === 0) return;
  await db('task_assignees').insert(memberIds.map((id) => ({ team_id: teamId, task_id: taskId, team_member_id: id })));
}

/** The ids among `ids` that are members of the project. */
export async function projectMemberIds(db: Knex, teamId: string, projectId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows: { team_member_id: string }[] = await db('project_members')
    .where({ team_id: teamId, project_id: projectId })
    .whereIn('team_member_id', ids)
    .select('team_member_id');
  return new Set(rows.map((r) => r.team_member_id));
}

/** Whether `candidateAncestorOf` is `taskId` itself or one of its descendants (so it cannot become its parent). */
export async function isSelfOrDescendant(db: Knex, teamId: string, taskId: string, candidate: string): Promise<boolean> {
  const result = await db.raw(
    `with recursive up (id, parent_task_id) as (
       select id, parent_task_id from tasks where team_id = :teamId and id = :candidate
       union
       select t.id, t.parent_task_id from tasks t join up on t.team_id = :teamId and t.id = up.parent_task_id
     )
     select exists (select 1 from up where id = :taskId) as found`,
    { teamId, taskId, candidate },
  );
  return Boolean(result.rows[0]?.found);
}

/** Archives the task and every descendant; returns the number of tasks archived. */
export async function archiveSubtree(db: Knex, teamId: string, id: string): Promise<number> {
  const result = await db.raw(
    `with recursive subtree (id) as (
       select id from tasks where team_id = :teamId and id = :id and archived_at is null
       union
       select t.id from tasks t join subtree s on t.team_id = :teamId and t.parent_task_id = s.id where t.archived_at is null
     )
     update tasks set archived_at = now(), updated_at = now()
     where team_id = :teamId and id in (select id from subtree)`,
    { teamId, id },
  );
  return Number(result.rowCount ?? 0);
}

/** Sets the fixed cost if the version still matches (when given); returns the new version or undefined. */
export async function updateFixedCost(
  db: Knex,
  teamId: string,
  id: string,
  fixedCost: string,
  expectedVersion?: number,
): Promise<number | undefined> {
  const query = db('tasks')
    .where({ team_id: teamId, id })
    .whereNull('archived_at')
    .update({ fixed_cost: fixedCost, finance_version: db.raw('finance_version + 1'), updated_at: db.fn.now() })
    .returning('finance_version');
  if (expectedVersion !== undefined) query.andWhere('finance_version', expectedVersion);
  const [row] = await query;
  return row?.finance_version as number | undefined;
}

export type FixedCostChange = {
  task_id: string;
  old_value: string;
  new_value: string;
  finance_version: number;
  changed_by: string;
  changed_by_token_id: string | null;
};

export async function insertFixedCostChange(db: Knex, teamId: string, change: FixedCostChange): Promise<void> {
  await db('fixed_cost_history').insert({ team_id: teamId, ...change });
}

/** The fixed-cost history's order: newest first (finance version, then time, then id; index fixed_cost_history_order_idx). */
export const FIXED_COST_HISTORY_ORDER: ListOrder = {
  list: 'fixed-cost-history',
  keys: [
    { sql: 'finance_version', type: 'integer', descending: true },
    { sql: 'changed_at', type: 'timestamptz', descending: true },
    { sql: 'id', type: 'uuid', descending: true },
  ],
};

export type FixedCostChangeRow = Omit<FixedCostChange, 'task_id'> & { id: string; changed_at: Date };

export async function listFixedCostChanges(db: Knex, teamId: string, taskId: string, page: PageRequest): Promise<Page<FixedCostChangeRow>> {
  const query = db('fixed_cost_history')
    .where({ team_id: teamId, task_id: taskId })
    .select('id', 'old_value', 'new_value', 'finance_version', 'changed_by', 'changed_by_token_id', 'changed_at');
  return takePage(await pagedQuery(db, query, FIXED_COST_HISTORY_ORDER, page), FIXED_COST_HISTORY_ORDER, page);
}
