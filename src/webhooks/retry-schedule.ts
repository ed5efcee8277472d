/*
 * When a failed delivery is tried again: the first retry within 10 s, then growing
 * delays, for at least 24 hours after the event; an attempt that fails after that marks the delivery
 * failed. Attempts at about 0, 5 s, 35 s, 2.6 min, 12.6 min, 42.6 min, 1.7 h, 3.7 h, 7.7 h, 15.7 h,
 * 23.7 h and 31.7 h after the event (docs/webhooks.md).
 */
const DELAYS_SECONDS = [5, 30, 120, 600, 1800, 3600, 7200, 14400, 28800];

/** Retries go on for at least this long after the event was recorded. */
export const RETRY_WINDOW_MS = 24 * 3600 * 1000;

/** The delay before the next attempt after `attempts` failed ones (1: the first attempt failed). */
export function retryDelayMs(attempts: number): number {
  const index = Math.min(Math.max(attempts, 1), DELAYS_SECONDS.length) - 1;
  return (DELAYS_SECONDS[index] as number) * 1000;
}

/**
 * When the next attempt is due after a failed one at `now` (the `attempts`-th), or undefined when
 * the retry window since `createdAt` is over: the delivery has failed.
 */
export function nextAttemptAt(createdAt: Date, attempts: number, now: Date, delayMs: (attempts: number) => number = retryDelayMs): Date | undefined {
  if (now.getTime() - createdAt.getTime() >= RETRY_WINDOW_MS) return undefined;
  return new Date(now.getTime() + delayMs(attempts));
}
