import type { NextFunction, Request, Response } from 'express';
import type { Knex } from 'knex';
import { Actor, Role, roleAllows } from '../auth/roles';
import type { TokenCache } from '../auth/token-cache';
import type { TokenUsage } from '../auth/token-usage';
import { authenticateHash, hasExpired, hashSecret } from '../auth/tokens.service';
import { AppError } from './errors';

declare module 'express-serve-static-core' {
  interface Request {
    actor?: Actor;
  }
}

const BEARER = /^Bearer[ ]+([^\s]+)\s*$/i;

/** The secret of a request's `Authorization: Bearer <secret>`, or undefined. */
export function bearerSecret(req: Request): string | undefined {
  return BEARER.exec(req.headers.authorization ?? '')?.[1] || undefined;
}

/** Authenticates the bearer token (401 for a missing, unknown, revoked or expired one) and notes its use. */
export function requireToken(db: Knex, cache: TokenCache, usage?: TokenUsage) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const secret = bearerSecret(req);
    if (!secret) throw new AppError(401, 'UNAUTHORIZED', 'A bearer token is required (Authorization: Bearer <token>)');
    const hash = hashSecret(secret);
    const key = hash.toString('hex');
    // A cached token goes on without waiting a turn of the loop, so the rest of the request's start (the
    // role, the team's share and a 429 from it) runs within the admission's turn (http/admission.ts).
    const actor = cache.get(key) ?? (await cache.lookup(key, () => authenticateHash(db, hash)));
    if (!actor || hasExpired(actor)) throw new AppError(401, 'UNAUTHORIZED', 'The bearer token is invalid, revoked or expired');
    usage?.used(actor);
    req.actor = actor;
    next();
  };
}

/** The caller, as established by requireToken. */
export function actorOf(req: Request): Actor {
  if (!req.actor) throw new AppError(401, 'UNAUTHORIZED', 'A bearer token is required');
  return req.actor;
}

export function requireRole(role: Role) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const actor = actorOf(req);
    if (!roleAllows(actor.role, role)) {
      throw new AppError(403, 'FORBIDDEN', `This operation needs the ${role} role; the token has ${actor.role}`);
    }
    next();
  };
}

/** Reads need a viewer, writes an editor; routes that need more say so themselves. */
export function roleByMethod(req: Request, res: Response, next: NextFunction) {
  const reading = req.method === 'GET' || req.method === 'HEAD';
  requireRole(reading ? 'viewer' : 'editor')(req, res, next);
}
