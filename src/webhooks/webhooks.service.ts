import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { z } from 'zod';
import { fieldError, notFound } from '../http/errors';
import type { PageRequest } from '../http/paging';
import { checkPublicHost } from './address-guard';
import * as repo from './webhooks.repository';
import type { createWebhookBody } from './webhooks.schemas';

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the Standard Webhooks format). */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Registers a webhook. Its URL may not point at a loopback, private or link-local address (checked
 * on the literal and on what the host name resolves to now; again at every delivery) unless
 * `allowPrivate`. The secret is answered this once.
 */
export async function createWebhook(db: Knex, teamId: string, body: z.infer<typeof createWebhookBody>, allowPrivate: boolean) {
  const url = new URL(body.url);
  if (!allowPrivate) {
    await checkPublicHost(url).catch((err: Error) => {
      throw fieldError('url', `${err.message}: refused (WEBHOOK_ALLOW_PRIVATE=true allows it)`);
    });
  }
  const secret = newSecret();
  const row = await repo.insertWebhook(db, teamId, { url: body.url, event_types: body.event_types, description: body.description ?? null, secret });
  return { ...row, secret };
}

export const listWebhooks = (db: Knex, teamId: string, page: PageRequest) => repo.listWebhooks(db, teamId, page);

export async function deleteWebhook(db: Knex, teamId: string, id: string) {
  const row = await repo.deleteWebhook(db, teamId, id);
  if (!row) throw notFound('NOT_FOUND', 'Webhook');
  return row;
}

export async function listDeliveries(db: Knex, teamId: string, id: string, page: PageRequest) {
  if (!(await repo.findWebhook(db, teamId, id))) throw notFound('NOT_FOUND', 'Webhook');
  return repo.listAttempts(db, teamId, id, page);
}
