import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { Actor, Role } from './roles';
import * as tokens from './tokens.repository';
import { notFound } from '../http/errors';
import type { PageRequest } from '../http/paging';

const TOKEN_PREFIX = 'pft_';

/**
 * Whether a secret has the shape of this service's tokens (the prefix, then base64url): told without
 * a lookup, so a token's owner can be recognised before it is authenticated (http/admission.ts).
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

/** Resolves a bearer secret to its caller, or undefined for an unknown or revoked token (always asks the database). */
export async function authenticate(db: Knex, secret: string): Promise<Actor | undefined> {
  return authenticateHash(db, hashSecret(secret));
}

export async function authenticateHash(db: Knex, hash: Buffer): Promise<Actor | undefined> {
  const row = await tokens.findActiveBySecretHash(db, hash);
  if (!row || !crypto.timingSafeEqual(Buffer.from(row.secret_hash), hash)) return undefined;
  return { teamId: row.team_id, role: row.role, tokenId: row.id, tokenName: row.name };
}

export function presentToken(row: { id: string; name: string; role: Role; created_at: Date; revoked_at: Date | null }) {
  return { id: row.id, name: row.name, role: row.role, created_at: row.created_at, revoked_at: row.revoked_at };
}

/** Creates a token; the secret is returned here and never again. */
export async function createToken(db: Knex, teamId: string, name: string, role: Role) {
  const token = generateSecret();
  const row = await tokens.insertToken(db, { team_id: teamId, name, role, secret_hash: hashSecret(token) });
  return { ...presentToken(row), token };
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
