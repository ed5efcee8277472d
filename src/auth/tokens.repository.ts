import type { Knex } from 'knex';
import { prepared } from '../db/prepared';
import type { Role } from './roles';

export type TokenRow = {
  team_id: string;
  id: string;
  name: string;
  role: Role;
  secret_hash: Buffer;
  created_at: Date;
  revoked_at: Date | null;
};

const PUBLIC_COLUMNS = ['id', 'name', 'role', 'created_at', 'revoked_at'] as const;

export async function findActiveBySecretHash(db: Knex, secretHash: Buffer): Promise<TokenRow | undefined> {
  return prepared(db<TokenRow>('api_tokens').where({ secret_hash: secretHash }).whereNull('revoked_at').first(), 'auth_token');
}

export async function insertToken(
  db: Knex,
  row: { team_id: string; name: string; role: Role; secret_hash: Buffer },
): Promise<Pick<TokenRow, (typeof PUBLIC_COLUMNS)[number]>> {
  const [created] = await db('api_tokens').insert(row).returning([...PUBLIC_COLUMNS]);
  return created;
}

/** Makes the given secret an active admin token of the team, whatever it was before. */
export async function upsertAdminToken(db: Knex, teamId: string, name: string, secretHash: Buffer): Promise<void> {
  await db('api_tokens')
    .insert({ team_id: teamId, name, role: 'admin', secret_hash: secretHash })
    .onConflict('secret_hash')
    .merge({ team_id: teamId, role: 'admin', revoked_at: null });
}

export async function listTokens(db: Knex, teamId: string) {
  return db('api_tokens').where({ team_id: teamId }).select(...PUBLIC_COLUMNS).orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

export async function revokeToken(db: Knex, teamId: string, id: string) {
  const [row] = await db('api_tokens')
    .where({ team_id: teamId, id })
    .update({ revoked_at: db.raw('coalesce(revoked_at, now())') })
    .returning([...PUBLIC_COLUMNS]);
  return row as Pick<TokenRow, (typeof PUBLIC_COLUMNS)[number]> | undefined;
}

export async function countActiveAdmins(db: Knex, teamId: string): Promise<number> {
  const [row] = await db('api_tokens')
    .where({ team_id: teamId, role: 'admin' })
    .whereNull('revoked_at')
    .count<{ count: number }[]>('* as count');
  return Number(row?.count ?? 0);
}
