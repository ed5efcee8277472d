import type { Knex } from 'knex';
import { prepared } from '../db/prepared';
import { ListOrder, PageRequest, pagedQuery, takePage } from '../http/paging';
import { REVOCATION_CHANNEL } from './revocation-listener';
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

/**
 * Makes the given secret an active admin token of the team, whatever it was before, and, on commit,
 * notifies every instance as a revocation does (its team or role may have changed: no instance may
 * keep serving the old one from its token cache).
 */
export async function upsertAdminToken(db: Knex, teamId: string, name: string, secretHash: Buffer): Promise<void> {
  await db.raw(
    `with upserted as (
       insert into api_tokens (team_id, name, role, secret_hash) values (:teamId, :name, 'admin', :secretHash)
       on conflict (secret_hash) do update set team_id = excluded.team_id, role = 'admin', revoked_at = null
       returning id
     )
     select pg_notify(:channel, u.id::text) from upserted u`,
    { teamId, name, secretHash, channel: REVOCATION_CHANNEL },
  );
}

/** The tokens list's order: by creation, then id (index api_tokens_list_order_idx). */
export const TOKENS_ORDER: ListOrder = {
  list: 'tokens',
  keys: [
    { sql: 'created_at', type: 'timestamptz' },
    { sql: 'id', type: 'uuid' },
  ],
};

export async function listTokens(db: Knex, teamId: string, page: PageRequest) {
  const rows: Pick<TokenRow, (typeof PUBLIC_COLUMNS)[number]>[] = await pagedQuery(db, db('api_tokens').where({ team_id: teamId }).select(...PUBLIC_COLUMNS), TOKENS_ORDER, page);
  return takePage(rows, TOKENS_ORDER, page);
}

/**
 * Revokes a token (keeping the first revocation time) and, on commit, notifies every instance
 * listening for revocations (auth/revocation-listener.ts), in one statement.
 */
export async function revokeToken(db: Knex, teamId: string, id: string) {
  const result = await db.raw(
    `with revoked as (
       update api_tokens set revoked_at = coalesce(revoked_at, now())
       where team_id = :teamId and id = :id
       returning ${PUBLIC_COLUMNS.join(', ')}
     )
     select ${PUBLIC_COLUMNS.map((column) => `r.${column}`).join(', ')}
     from revoked r cross join lateral (select pg_notify(:channel, r.id::text)) notified`,
    { teamId, id, channel: REVOCATION_CHANNEL },
  );
  return result.rows[0] as Pick<TokenRow, (typeof PUBLIC_COLUMNS)[number]> | undefined;
}

export async function countActiveAdmins(db: Knex, teamId: string): Promise<number> {
  const [row] = await db('api_tokens')
    .where({ team_id: teamId, role: 'admin' })
    .whereNull('revoked_at')
    .count<{ count: number }[]>('* as count');
  return Number(row?.count ?? 0);
}
