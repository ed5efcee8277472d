import { RETRY_WINDOW_MS, nextAttemptAt, retryDelayMs } from '../../../src/webhooks/retry-schedule';

describe('the retry schedule', () => {
  it('retries first within 10 s, then with growing delays, for at least 24 hours, then gives up', () => {
    const created = new Date('2026-11-20T00:00:00Z');
    expect(retryDelayMs(1)).toBeLessThanOrEqual(10_000);
    // Attempt at the event, then after every failure at the time the schedule says.
    let at = created;
    const times: number[] = [0];
    for (let attempts = 1; attempts < 100; attempts += 1) {
      const next = nextAttemptAt(created, attempts, at);
      if (!next) break;
      at = next;
      times.push((at.getTime() - created.getTime()) / 1000);
    }
    // Hand-computed: 5 s, then +30 s, +2 min, +10 min, +30 min, +1 h, +2 h, +4 h, +8 h, +8 h, +8 h.
    expect(times).toEqual([0, 5, 35, 155, 755, 2555, 6155, 13355, 27755, 56555, 85355, 114155]);
    const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
    expect(gaps).toEqual([...gaps].sort((a, b) => a - b));
    expect((times.at(-1) as number) * 1000).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
    expect(nextAttemptAt(created, 12, new Date(created.getTime() + 114155 * 1000))).toBeUndefined();
  });
});
