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
  expires_at: Date | null;
  from_admin_token: boolean;
};

const PUBLIC_COLUMNS = ['id', 'name', 'role', 'created_at', 'revoked_at', 'expires_at'] as const;
/** A token as the API shows it: its columns and, from api_token_usage, the minute of its last use. */
export type PublicToken = Pick<TokenRow, (typeof PUBLIC_COLUMNS)[number]> & { last_used_at: Date | null };

/** The token with this secret's hash, unless it is revoked or expired at `nowIso` (the service clock). */
export async function findActiveBySecretHash(db: Knex, secretHash: Buffer, nowIso: string): Promise<TokenRow | undefined> {
  const query = db<TokenRow>('api_tokens')
    .where({ secret_hash: secretHash })
    .whereNull('revoked_at')
    .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', nowIso))
    .first();
  return prepared(query, 'auth_token');
}

export async function insertToken(
  db: Knex,
  row: { team_id: string; name: string; role: Role; secret_hash: Buffer; expires_at?: Date },
): Promise<PublicToken> {
  const [created] = await db('api_tokens').insert(row).returning([...PUBLIC_COLUMNS]);
  return { ...created, last_used_at: null };
}

/** Inserts a token and returns only its id (columns every schema version has: team creation, upgrades' tests). */
export async function insertTokenReturningId(db: Knex, row: { team_id: string; name: string; role: Role; secret_hash: Buffer }): Promise<string> {
  const [created] = await db('api_tokens').insert(row).returning(['id']);
  return created.id as string;
}

/**
 * Makes the given secret the admin token ADMIN_TOKEN stands for, in one statement:
 *   - the token with this secret becomes (or stays) an admin of the team, marked as ADMIN_TOKEN's; a
 *     revoked one stays revoked (a revocation is never undone by a restart);
 *   - every other token of the team marked as ADMIN_TOKEN's that is still active is revoked: the
 *     value replaced the old one (rotation); unless the given one is revoked: an instance restarted
 *     with a value rotated out must not revoke the value that replaced it;
 * and, on commit, notifies every instance of each token it touched, as a revocation does, so no
 * instance keeps serving the old secret, or a changed team or role, from its token cache.
 * Returns whether the given secret is revoked (then ADMIN_TOKEN does not authenticate).
 */
export async function installAdminToken(db: Knex, teamId: string, name: string, secretHash: Buffer): Promise<{ revoked: boolean }> {
  const result = await db.raw(
    `with current as (
       insert into api_tokens (team_id, name, role, secret_hash, from_admin_token)
       values (:teamId, :name, 'admin', :secretHash, true)
       on conflict (secret_hash) do update set team_id = excluded.team_id, role = 'admin', from_admin_token = true
       returning id, revoked_at
     ),
     replaced as (
       update api_tokens set revoked_at = now()
       where team_id = :teamId and from_admin_token and revoked_at is null and secret_hash <> :secretHash
         and exists (select 1 from current c where c.revoked_at is null)
       returning id
     ),
     touched as (
       select id, revoked_at is not null as revoked, true as is_current from current
       union all
       select id, true, false from replaced
     )
     select t.is_current, t.revoked from touched t cross join lateral (select pg_notify(:channel, t.id::text)) notified`,
    { teamId, name, secretHash, channel: REVOCATION_CHANNEL },
  );
  const current = (result.rows as { is_current: boolean; revoked: boolean }[]).find((row) => row.is_current);
  return { revoked: Boolean(current?.revoked) };
}

/** The tokens list's order: by creation, then id (index api_tokens_list_order_idx). */
export const TOKENS_ORDER: ListOrder = {
  list: 'tokens',
  keys: [
    { sql: 't.created_at', type: 'timestamptz' },
    { sql: 't.id', type: 'uuid' },
  ],
};

export async function listTokens(db: Knex, teamId: string, page: PageRequest) {
  const query = db('api_tokens as t')
    .leftJoin('api_token_usage as u', (join) => join.on('u.team_id', 't.team_id').andOn('u.token_id', 't.id'))
    .where('t.team_id', teamId)
    .select(...PUBLIC_COLUMNS.map((column) => `t.${column}`), 'u.last_used_at');
  const rows: PublicToken[] = await pagedQuery(db, query, TOKENS_ORDER, page);
  return takePage(rows, TOKENS_ORDER, page);
}

/**
 * Records that the token was used in the minute starting at `minute`; never moves it back (another
 * instance may have recorded a later minute). One statement per token and minute (auth/token-usage.ts).
 */
export async function recordUse(db: Knex, teamId: string, id: string, minute: Date): Promise<void> {
  await db('api_token_usage')
    .insert({ team_id: teamId, token_id: id, last_used_at: minute })
    .onConflict(['team_id', 'token_id'])
    .merge(['last_used_at'])
    .where('api_token_usage.last_used_at', '<', minute);
}

/**
 * Revokes a token (keeping the first revocation time) and, on commit, notifies every instance
 * listening for revocations (auth/revocation-listener.ts), in one statement.
 */
export async function revokeToken(db: Knex, teamId: string, id: string): Promise<PublicToken | undefined> {
  const result = await db.raw(
    `with revoked as (
       update api_tokens set revoked_at = coalesce(revoked_at, now())
       where team_id = :teamId and id = :id
       returning ${PUBLIC_COLUMNS.join(', ')}
     )
     select ${PUBLIC_COLUMNS.map((column) => `r.${column}`).join(', ')}, u.last_used_at
     from revoked r cross join lateral (select pg_notify(:channel, r.id::text)) notified
     left join api_token_usage u on u.team_id = :teamId and u.token_id = r.id`,
    { teamId, id, channel: REVOCATION_CHANNEL },
  );
  return result.rows[0] as PublicToken | undefined;
}

export async function countActiveAdmins(db: Knex, teamId: string): Promise<number> {
  const [row] = await db('api_tokens')
    .where({ team_id: teamId, role: 'admin' })
    .whereNull('revoked_at')
    .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', db.fn.now()))
    .count<{ count: number }[]>('* as count');
  return Number(row?.count ?? 0);
}

export async function teamExists(db: Knex, teamId: string): Promise<boolean> {
  return Boolean(await db('teams').where({ id: teamId }).first('id'));
}
