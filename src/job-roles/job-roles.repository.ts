import type { Knex } from 'knex';
import { ListOrder, Page, PageRequest, pagedQuery, takePage } from '../http/paging';

export type JobRoleRow = { id: string; name: string; created_at: Date };

export async function insertJobRole(db: Knex, teamId: string, name: string): Promise<JobRoleRow> {
  const [row] = await db('job_roles').insert({ team_id: teamId, name }).returning(['id', 'name', 'created_at']);
  return row;
}

/** The job roles list's order: by name, then id (index job_roles_list_order_idx). */
export const JOB_ROLES_ORDER: ListOrder = {
  list: 'job-roles',
  keys: [
    { sql: 'name', type: 'text' },
    { sql: 'id', type: 'uuid' },
  ],
};

export async function listJobRoles(db: Knex, teamId: string, page: PageRequest): Promise<Page<JobRoleRow>> {
  const rows = await pagedQuery(db, db('job_roles').where({ team_id: teamId }).select('id', 'name', 'created_at'), JOB_ROLES_ORDER, page);
  return takePage(rows, JOB_ROLES_ORDER, page);
}

/** The ids among `ids` that are job roles of the team. */
export async function existingJobRoleIds(db: Knex, teamId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows: { id: string }[] = await db('job_roles').where({ team_id: teamId }).whereIn('id', ids).select('id');
  return new Set(rows.map((r) => r.id));
}
