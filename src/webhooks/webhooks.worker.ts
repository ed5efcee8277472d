import { setMaxListeners } from 'node:events';
import type { Knex } from 'knex';
import { now as serviceNow } from '../clock';
import type { Logger } from '../logger';
import { ATTEMPT_TIMEOUT_MS, deliver, delivered } from './deliver';
import { nextAttemptAt, retryDelayMs } from './retry-schedule';
import * as repo from './webhooks.repository';
import { nextTurn } from '../turns';
import { deliveryStats } from './webhook-metrics';

/*
 * Delivers the queued webhook deliveries in the background, off the request path, on either backend.
 * Every state is in the database (the queue row, its lease, the attempt log), so a SIGKILL at any
 * moment loses nothing: a delivery claimed by a killed process is due again when its lease ends and is
 * sent again (at least once; receivers deduplicate on webhook-id). Several instances share the queue
 * (claimDue: FOR UPDATE SKIP LOCKED). A webhook has at most `perWebhook` attempts in flight in an
 * instance, so a receiver that hangs holds only its own deliveries (each for the attempt's 10 s
 * timeout), never another webhook's or a request.
 */

export type WorkerOptions = {
  db: Knex;
  logger: Logger;
  /** Deliver to loopback, private and link-local addresses too (WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** The clock deliveries are due by (default: the service clock, src/clock.ts). */
  clock?: () => Date;
  /** The delay before a retry after n failed attempts (default: retry-schedule.ts). */
  retryDelayMs?: (attempts: number) => number;
  /** How often the queue is polled when idle (default 500 ms). */
  pollMs?: number;
  /** Attempts in flight at once per webhook (default 16) and in all (default 256: sixteen receivers that hang fill it). */
  perWebhook?: number;
  concurrency?: number;
};

export type Worker = {
  /** Polls at once (tests: instead of waiting for the next poll). */
  poll(): Promise<void>;
  stop(): Promise<void>;
};

/** How long the worker waits after an attempt ends before it claims, to claim for the others ending meanwhile. */
const REFILL_MS = 5;

/** Deliveries claimed between two refreshes of the queue's statistics. */
const ANALYZE_EVERY = 2000;

/** A claim outlives the attempt: past it, the delivery is due again (its instance died). */
const LEASE_MS = ATTEMPT_TIMEOUT_MS * 6;

export function startWebhookWorker(options: WorkerOptions): Worker {
  const { db, logger, allowPrivate } = options;
  const clock = options.clock ?? serviceNow;
  const delayMs = options.retryDelayMs ?? retryDelayMs;
  const pollMs = options.pollMs ?? 500;
  const perWebhook = options.perWebhook ?? 16;
  const concurrency = options.concurrency ?? 256;

  const inFlight = new Map<string, number>();
  let total = 0;
  const running = new Set<Promise<void>>();
  const abort = new AbortController();
  // Every attempt in flight listens to it (up to `concurrency`): not a leak.
  setMaxListeners(0, abort.signal);
  let stopped = false;
  let polling: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  // Attempts made, waiting to be recorded: written together, one statement per batch, while the
  // previous batch is being written (a busy queue costs one write per batch, not one per attempt).
  let toRecord: { record: repo.AttemptRecord; done: (err?: unknown) => void }[] = [];
  let recording: Promise<void> | undefined;
  function record(entry: repo.AttemptRecord): Promise<void> {
    const written = new Promise<void>((resolve, reject) => toRecord.push({ record: entry, done: (err) => (err === undefined ? resolve() : reject(err)) }));
    if (!recording) {
      recording = (async () => {
        while (toRecord.length > 0) {
          // The answers already arrived are taken in too: on PGlite a statement runs on this thread,
          // so none arrives while it runs, and without this turn of the event loop every batch is one.
          await nextTurn();
          const batch = toRecord;
          toRecord = [];
          await repo.recordAttempts(db, batch.map((b) => b.record)).then(
            () => batch.forEach((b) => b.done()),
            (err: unknown) => batch.forEach((b) => b.done(err ?? new Error('could not record'))),
          );
        }
      })().finally(() => (recording = undefined));
    }
    return written;
  }

  /** Sends a delivery, frees its slot once the receiver has answered (or not), then records the attempt. */
  async function attempt(delivery: repo.ClaimedDelivery, free: () => void): Promise<void> {
    const attemptedAt = clock();
    const outcome = await deliver({ id: delivery.event_id, body: delivery.body, url: delivery.url, secret: delivery.secret }, { allowPrivate, now: attemptedAt, signal: abort.signal });
    // The receiver is done with it: the slot may take the next delivery while this one is recorded
    // (its lease keeps it from being claimed again meanwhile).
    free();
    const ok = delivered(outcome);
    const next = ok ? undefined : nextAttemptAt(new Date(delivery.created_at), delivery.attempts, clock(), delayMs);
    // Cut short by stop(): given back, due at once for the next start (or another instance).
    if (stopped && !ok) return repo.releaseClaims(db, [delivery], clock());
    await record({ delivery, ...outcome, attemptedAt, delivered: ok, nextAttemptAt: next });
    deliveryStats.record(ok ? 'delivered' : next ? 'retrying' : 'failed');
  }

  // Room for another attempt: claimed soon rather than at the next poll, the attempts that end within
  // REFILL_MS together (one claim of several rows, not one per attempt: a claim costs the same for one).
  let refilling: NodeJS.Timeout | undefined;
  function refill(): void {
    if (stopped || refilling) return;
    refilling = setTimeout(() => {
      refilling = undefined;
      void poll();
    }, REFILL_MS);
  }

  function launch(delivery: repo.ClaimedDelivery): void {
    inFlight.set(delivery.webhook_id, (inFlight.get(delivery.webhook_id) ?? 0) + 1);
    total += 1;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      const left = (inFlight.get(delivery.webhook_id) ?? 1) - 1;
      if (left === 0) inFlight.delete(delivery.webhook_id);
      else inFlight.set(delivery.webhook_id, left);
      total -= 1;
      refill();
    };
    const run = attempt(delivery, free)
      .catch((err: unknown) => logger.warn({ err, delivery: delivery.id }, 'could not record a webhook attempt'))
      .finally(() => {
        free();
        running.delete(run);
      });
    running.add(run);
  }

  // The queue's statistics, refreshed at the first poll and after every ANALYZE_EVERY claims
  // (repo.analyzeQueue: the claim's plan needs them; PGlite has no autovacuum).
  let claimsSinceAnalyze = ANALYZE_EVERY;
  async function pollOnce(): Promise<void> {
    const room = concurrency - total;
    if (room <= 0 || stopped) return;
    if (claimsSinceAnalyze >= ANALYZE_EVERY) {
      claimsSinceAnalyze = 0;
      await repo.analyzeQueue(db).catch((err: unknown) => logger.warn({ err }, 'could not analyze the webhook deliveries'));
    }
    const now = clock();
    const claimed = await repo.claimDue(db, { now, leaseUntil: new Date(now.getTime() + LEASE_MS), limit: room, perWebhook, inFlight });
    claimsSinceAnalyze += claimed.length;
    if (stopped) {
      await repo.releaseClaims(db, claimed, now);
      return;
    }
    for (const delivery of claimed) launch(delivery);
  }

  /** One poll at a time; a poll asked for meanwhile runs right after it. */
  function poll(): Promise<void> {
    if (polling) {
      again = true;
      return polling;
    }
    polling = (async () => {
      do {
        again = false;
        await pollOnce().catch((err: unknown) => logger.warn({ err }, 'could not poll the webhook deliveries'));
      } while (again && !stopped);
    })().finally(() => (polling = undefined));
    return polling;
  }

  const tick = () => {
    timer = setTimeout(() => void poll().finally(() => !stopped && tick()), pollMs);
    timer.unref();
  };
  tick();

  return {
    poll,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      clearTimeout(refilling);
      await polling;
      // Attempts in flight are cut short: their deliveries are claimed again once their lease ends.
      abort.abort();
      await Promise.allSettled([...running]);
    },
  };
}
