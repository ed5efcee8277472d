import type { NextFunction, Request, Response } from 'express';

/**
 * How many API requests are being answered, and since when none has been: background work (the
 * breakdown parts filler, finance/read-model/parts-fill.ts) waits for a quiet moment instead of taking the
 * service's one thread from them.
 */
export type Activity = {
  track: (req: Request, res: Response, next: NextFunction) => void;
  /** Whether no API request has been in flight for the last `ms` milliseconds. */
  quietFor(ms: number): boolean;
};

/** `clock` gives milliseconds (tests set it). */
export function createActivity(clock: () => number = () => performance.now()): Activity {
  let inFlight = 0;
  let lastEnded = -Infinity;
  return {
    track(_req, res, next) {
      inFlight += 1;
      // 'close' follows a complete response as well as a client that left (as in http/team-share.ts).
      res.once('close', () => {
        inFlight -= 1;
        lastEnded = clock();
      });
      next();
    },
    quietFor: (ms) => inFlight === 0 && clock() - lastEnded >= ms,
  };
}
