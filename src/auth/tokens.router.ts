import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf, requireRole } from '../http/auth';
import { pageOf, sendPage } from '../http/paging';
import { sendSuccess } from '../http/respond';
import { parseBody, parseId } from '../http/validate';
import { createTeamWithAdmin, requireOperator } from '../teams/teams.service';
import type { TokenCache } from './token-cache';
import { createTeamBody, createTokenBody } from './tokens.schemas';
import { TOKENS_ORDER } from './tokens.repository';
import * as service from './tokens.service';

/**
 * Token and team management: admins only, and teams the operator's (an admin of the default team).
 * These answers carry secrets, or say which exist: no cache may keep them. A revoked token is
 * forgotten by this instance's cache at once.
 */
export function tokensRouter(db: Knex, cache: TokenCache): Router {
  const router = Router();
  router.use(['/tokens', '/teams'], (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  }, requireRole('admin'));
  router.post('/tokens', async (req, res) => {
    const body = parseBody(createTokenBody, req.body);
    sendSuccess(res, await service.createToken(db, actorOf(req).teamId, body.name, body.role, body.expires_in_days), 201);
  });
  router.get('/tokens', async (req, res) => {
    sendPage(req, res, await service.listTokens(db, actorOf(req).teamId, pageOf(req, TOKENS_ORDER)));
  });
  router.delete('/tokens/:id', async (req, res) => {
    const revoked = await service.revokeToken(db, actorOf(req).teamId, parseId(req.params.id));
    cache.forgetToken(revoked.id);
    sendSuccess(res, revoked);
  });
  router.post('/teams', async (req, res) => {
    const actor = actorOf(req);
    requireOperator(actor);
    const body = parseBody(createTeamBody, req.body);
    sendSuccess(res, await createTeamWithAdmin(db, body.name, actor.tokenId), 201);
  });
  return router;
}
