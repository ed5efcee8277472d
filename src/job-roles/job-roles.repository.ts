import type { Knex } from 'knex';

export type JobRoleRow = { id: string; name: string; created_at: Date };

export async function insertJobRole(db: Knex, teamId: string, name: string): Promise<JobRoleRow> {
  const [row] = await db('job_roles').insert({ team_id: teamId, name }).returning(['id', 'name', 'created_at']);
  return row;
}

export async function listJobRoles(db: Knex, teamId: string): Promise<JobRoleRow[]> {
  return db('job_roles').where({ team_id: teamId }).select('id', 'name', 'created_at').orderBy([{ column: 'name' }, { column: 'id' }]);
}

/** The ids among `ids` that are job roles of the team. */
export async function existingJobRoleIds(db: Knex, teamId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows: { id: string }[] = await db('job_roles').where({ team_id: teamId }).whereIn('id', ids).select('id');
  return new Set(rows.map((r) => r.id));
}
