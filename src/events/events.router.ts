import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf } from '../http/auth';
import { sendSuccess } from '../http/respond';
import { parseQuery } from '../http/validate';
import { eventsQuery } from './events.schemas';
import * as service from './events.service';

/** The team's event feed: any role reads it. */
export function eventsRouter(db: Knex): Router {
  const router = Router();
  router.get('/events', async (req, res) => {
    sendSuccess(res, await service.listEvents(db, actorOf(req).teamId, parseQuery(eventsQuery, req.query)));
  });
  return router;
}
