import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf } from '../http/auth';
import { sendSuccess } from '../http/respond';

/** Who the token is: its team and role, so a screen shows only what the token may do. Any role. */
export function sessionRouter(db: Knex): Router {
  const router = Router();
  router.get('/session', async (req, res) => {
    const actor = actorOf(req);
    const team = await db('teams').where({ id: actor.teamId }).first('id', 'name');
    sendSuccess(res, {
      team: { id: actor.teamId, name: (team?.name as string | undefined) ?? '' },
      role: actor.role,
      token: { id: actor.tokenId, name: actor.tokenName },
    });
  });
  return router;
}
