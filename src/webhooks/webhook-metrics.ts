import type { Knex } from 'knex';
import client from 'prom-client';
import { now } from '../clock';
import { oldestUndeliveredAge } from './webhooks.repository';

/** What an attempt came to: delivered (2xx), failed and to be retried, or failed for good. */
export type AttemptResult = 'delivered' | 'retrying' | 'failed';

/** This process's attempts by result, since start (the worker counts; /metrics reads). */
const tally: Record<AttemptResult, number> = { delivered: 0, retrying: 0, failed: 0 };

export const deliveryStats = {
  record(result: AttemptResult): void {
    tally[result] += 1;
  },
};

/**
 * Registers the webhook metrics in an app's registry (http/metrics.ts): attempts by result (a counter
 * that follows this process's tally), and the age of the oldest event still waiting for a delivery
 * (from the database, so the same on every instance).
 */
export function registerWebhookMetrics(registry: client.Registry, db: Knex): void {
  const seen: Record<AttemptResult, number> = { delivered: 0, retrying: 0, failed: 0 };
  new client.Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this instance, by result: delivered (2xx), retrying (failed, tried again later), failed (given up)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      for (const result of Object.keys(tally) as AttemptResult[]) {
        this.inc({ result }, tally[result] - seen[result]);
        seen[result] = tally[result];
      }
    },
  });
  new client.Gauge({
    name: 'webhook_oldest_undelivered_event_age_seconds',
    help: 'Age of the oldest event not yet delivered to a webhook that follows it (0: none waiting)',
    registers: [registry],
    async collect() {
      this.set(await oldestUndeliveredAge(db, now()).catch(() => 0));
    },
  });
}
