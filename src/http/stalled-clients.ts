import type { NextFunction, Request, Response } from 'express';

/*
 * A client that takes nothing of an answer for `limitMs` is cut off (its connection destroyed): a slow
 * or stalled reader holds a connection, its team's turn and its answer's memory that long at most, and
 * what was writing to it (an export) stops there (finance/http/finance.export.ts).
 *
 * Only Node's socket timeout sees whether the system accepts any byte of a pending write: it fires
 * after a period with no write, no read and no byte accepted (while the write queue shrinks it is put
 * off instead). It is armed for a sixth of the limit; each time it fires with answer bytes still
 * pending and nothing taken since, the stall counts another period, and at the limit the connection
 * is cut. A firing with nothing pending (the service still computing the answer, or the request still
 * arriving) is not the reader's doing and is ignored; the next write re-arms the timer.
 */
const PERIODS = 6;

export function cutStalledClients(limitMs: number) {
  const period = Math.max(1, Math.ceil(limitMs / PERIODS));
  return (_req: Request, res: Response, next: NextFunction) => {
    let stalledSince: number | undefined;
    let lastFired = -Infinity;
    let lastPending = 0;
    res.setTimeout(period, () => {
      const now = performance.now();
      const pending = res.socket?.writableLength ?? 0;
      // Fired later than one period after the last time: the timer was put off, so bytes were taken.
      const progressed = pending !== lastPending || now - lastFired > period * 1.5;
      lastFired = now;
      lastPending = pending;
      if (pending === 0) {
        stalledSince = undefined;
        return;
      }
      if (stalledSince === undefined || progressed) stalledSince = now - period;
      if (now - stalledSince >= limitMs) return void res.destroy();
      // The timer stops once it has fired: armed again for the next period.
      res.setTimeout(period);
    });
    next();
  };
}
