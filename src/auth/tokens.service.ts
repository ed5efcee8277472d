import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { now } from '../clock';
import { Actor, Role } from './roles';
import * as tokens from './tokens.repository';
import { notFound } from '../http/errors';
import type { PageRequest } from '../http/paging';

const TOKEN_PREFIX = 'pft_';
const DAY_MS = 86_400_000;

/**
 * Whether a secret has the shape of this service's tokens (the prefix, then base64url): told without
 * a lookup, so a request carrying junk is never looked up as a token.
 */
export function looksLikeToken(secret: string): boolean {
  return /^pft_[A-Za-z0-9_-]{1,200}$/.test(secret);
}

export function hashSecret(secret: string): Buffer {
  return crypto.createHash('sha256').update(secret, 'utf8').digest();
}

export function generateSecret(): string {
  return TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
}

/** Resolves a bearer secret to its caller, or undefined for an unknown, revoked or expired token (always asks the database). */
export async function authenticate(db: Knex, secret: string): Promise<Actor | undefined> {
  return authenticateHash(db, hashSecret(secret));
}

export async function authenticateHash(db: Knex, hash: Buffer): Promise<Actor | undefined> {
  const row = await tokens.findActiveBySecretHash(db, hash, now().toISOString());
  if (!row || !crypto.timingSafeEqual(Buffer.from(row.secret_hash), hash)) return undefined;
  const actor: Actor = { teamId: row.team_id, role: row.role, tokenId: row.id, tokenName: row.name };
  if (row.expires_at) actor.expiresAt = new Date(row.expires_at).getTime();
  return actor;
}

/** Whether a caller's token has expired by the service clock (a cached caller may outlive its token's expiry). */
export function hasExpired(actor: Actor, at: Date = now()): boolean {
  return actor.expiresAt !== undefined && actor.expiresAt <= at.getTime();
}

export function presentToken(row: tokens.PublicToken) {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
  };
}

/** Creates a token, expiring `expiresInDays` days from now if given; the secret is returned here and never again. */
export async function createToken(db: Knex, teamId: string, name: string, role: Role, expiresInDays?: number) {
  const token = generateSecret();
  const expires = expiresInDays === undefined ? {} : { expires_at: new Date(now().getTime() + expiresInDays * DAY_MS) };
  const row = await tokens.insertToken(db, { team_id: teamId, name, role, secret_hash: hashSecret(token), ...expires });
  return { ...presentToken(row), token };
}

/** A new admin token of the team, without expiry; only its secret is returned (a new team's first token). */
export async function createAdminSecret(db: Knex, teamId: string, name: string): Promise<string> {
  const token = generateSecret();
  await tokens.insertTokenReturningId(db, { team_id: teamId, name, role: 'admin', secret_hash: hashSecret(token) });
  return token;
}

export async function listTokens(db: Knex, teamId: string, page: PageRequest) {
  const { rows, next } = await tokens.listTokens(db, teamId, page);
  return { rows: rows.map(presentToken), next };
}

export async function revokeToken(db: Knex, teamId: string, id: string) {
  const row = await tokens.revokeToken(db, teamId, id);
  if (!row) throw notFound('TOKEN_NOT_FOUND', 'Token');
  return presentToken(row);
}
