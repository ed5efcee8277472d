import type { Knex } from 'knex';
import { ListOrder, Page, PageRequest, pagedQuery, takePage } from '../http/paging';

export type TeamMemberRow = {
  id: string;
  name: string;
  email: string | null;
  avatar_url: string | null;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = ['id', 'name', 'email', 'avatar_url', 'created_at', 'updated_at'];

export async function insertTeamMember(
  db: Knex,
  teamId: string,
  fields: { name: string; email?: string | null; avatar_url?: string | null },
): Promise<TeamMemberRow> {
  const [row] = await db('team_members').insert({ team_id: teamId, ...fields }).returning(COLUMNS);
  return row;
}

export async function findTeamMember(db: Knex, teamId: string, id: string): Promise<TeamMemberRow | undefined> {
  return db('team_members').where({ team_id: teamId, id }).first(COLUMNS);
}

export async function updateTeamMember(
  db: Knex,
  teamId: string,
  id: string,
  fields: Partial<Pick<TeamMemberRow, 'name' | 'email' | 'avatar_url'>>,
): Promise<TeamMemberRow | undefined> {
  const [row] = await db('team_members')
    .where({ team_id: teamId, id })
    .update({ ...fields, updated_at: db.fn.now() })
    .returning(COLUMNS);
  return row;
}

/** The team members list's order: by name, then id (index team_members_list_order_idx). */
export const TEAM_MEMBERS_ORDER: ListOrder = {
  list: 'team-members',
  keys: [
    { sql: 'name', type: 'text' },
    { sql: 'id', type: 'uuid' },
  ],
};

export async function listTeamMembers(db: Knex, teamId: string, page: PageRequest): Promise<Page<TeamMemberRow>> {
  const rows = await pagedQuery(db, db('team_members').where({ team_id: teamId }).select(COLUMNS), TEAM_MEMBERS_ORDER, page);
  return takePage(rows, TEAM_MEMBERS_ORDER, page);
}

/** The ids among `ids` that are members of the team. */
export async function existingTeamMemberIds(db: Knex, teamId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows: { id: string }[] = await db('team_members').where({ team_id: teamId }).whereIn('id', ids).select('id');
  return new Set(rows.map((r) => r.id));
}
