import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf, requireRole } from '../http/auth';
import { sendSuccess } from '../http/respond';
import { parseBody, parseId, parseQuery } from '../http/validate';
import { createWebhookBody, deliveriesQuery } from './webhooks.schemas';
import * as service from './webhooks.service';

/** Webhooks: admins only, like tokens (a webhook's URL may carry a receiver's secret). */
export function webhooksRouter(db: Knex, opts: { allowPrivate: boolean }): Router {
  const router = Router();
  router.use('/webhooks', requireRole('admin'));
  router.post('/webhooks', async (req, res) => {
    const body = parseBody(createWebhookBody, req.body);
    res.setHeader('Cache-Control', 'no-store');
    sendSuccess(res, await service.createWebhook(db, actorOf(req).teamId, body, opts.allowPrivate), 201);
  });
  router.get('/webhooks', async (req, res) => {
    sendSuccess(res, await service.listWebhooks(db, actorOf(req).teamId));
  });
  router.delete('/webhooks/:id', async (req, res) => {
    sendSuccess(res, await service.deleteWebhook(db, actorOf(req).teamId, parseId(req.params.id)));
  });
  router.get('/webhooks/:id/deliveries', async (req, res) => {
    const query = parseQuery(deliveriesQuery, req.query);
    sendSuccess(res, await service.listDeliveries(db, actorOf(req).teamId, parseId(req.params.id), query.limit));
  });
  return router;
}
