import { Router } from 'express';
import type { Knex } from 'knex';
import { actorOf, requireRole } from '../http/auth';
import { pageOf, sendPage } from '../http/paging';
import { sendSuccess } from '../http/respond';
import { parseBody, parseId } from '../http/validate';
import { ATTEMPTS_ORDER, WEBHOOKS_ORDER } from './webhooks.repository';
import { createWebhookBody } from './webhooks.schemas';
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
    sendPage(req, res, await service.listWebhooks(db, actorOf(req).teamId, pageOf(req, WEBHOOKS_ORDER)));
  });
  router.delete('/webhooks/:id', async (req, res) => {
    sendSuccess(res, await service.deleteWebhook(db, actorOf(req).teamId, parseId(req.params.id)));
  });
  router.get('/webhooks/:id/deliveries', async (req, res) => {
    const id = parseId(req.params.id);
    sendPage(req, res, await service.listDeliveries(db, actorOf(req).teamId, id, pageOf(req, ATTEMPTS_ORDER)));
  });
  return router;
}
