import type { NextFunction, Request, Response } from 'express';
import { looksLikeToken } from '../auth/tokens.service';
import { TURN_MS } from '../turns';
import { bearerSecret } from './auth';

/*
 * Requests taken up in turns of the event loop, fairly between clients. When hundreds of requests
 * arrive at once (a client opening 600 connections, or connections that piled up while the loop was
 * busy), Node parses them all in one pass of the loop and each one's synchronous start (auth, logging,
 * and for those refused at once, the whole 429 answer) runs back to back: 456 refusals after a flood
 * kept the loop, /healthz and every other team waiting for 680 ms. Here a request that arrives once
 * the current pass has spent `budgetMs` on starting requests waits (holding no database connection), and
 * the waiting ones are started `budgetMs` at a time with a turn of the loop between, one per client
 * in turn: a client sending many requests at once does not push another client's one behind all of
 * its own. /healthz, /readyz and /metrics never wait: a probe must see the loop's delay, not the queue's.
 *
 * A client is the team of a token this instance has already checked (its token cache), else the
 * request's address (req.ip: behind a trusted proxy, the client's own). An unchecked token is never a
 * client of its own: made-up tokens, one per request, would each get a turn and push every real
 * client's requests behind them.
 */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

export type Admission = (req: Request, res: Response, next: NextFunction) => void;

/** Whom a waiting request's turn belongs to. */
export type ClientOf = (req: Request) => string;

const addressOf = (req: Request) => `address ${req.ip ?? req.socket?.remoteAddress ?? ''}`;

/**
 * Clients told by `teamOfCheckedToken`, which answers only for a secret already authenticated (and
 * without a lookup); any other request is its address's.
 */
export function clientByCheckedToken(teamOfCheckedToken: (secret: string) => string | undefined): ClientOf {
  return (req) => {
    const secret = bearerSecret(req);
    const team = secret !== undefined && looksLikeToken(secret) ? teamOfCheckedToken(secret) : undefined;
    return team === undefined ? addressOf(req) : `team ${team}`;
  };
}

/** `clock` gives milliseconds (tests set it); without `clientOf`, every request is its address's. */
export function admissionInTurns(budgetMs = TURN_MS, clock: () => number = () => performance.now(), clientOf: ClientOf = addressOf): Admission {
  /** When this pass of the loop started starting requests (undefined: it has not). */
  let passStarted: number | undefined;
  const endPass = () => (passStarted = undefined);
  /** Waiting requests by client, in arrival order; the map's order is the order clients take turns in. */
  const waiting = new Map<string, (() => void)[]>();
  let draining = false;

  const drain = () => {
    const started = clock();
    try {
      while (waiting.size > 0 && clock() - started < budgetMs) {
        // One request of each client in turn: the first client's goes, and the client goes to the back.
        const [client, queue] = waiting.entries().next().value as [string, (() => void)[]];
        const start = queue.shift() as () => void;
        waiting.delete(client);
        if (queue.length > 0) waiting.set(client, queue);
        start();
      }
    } finally {
      // Whatever a start did, the others are not left waiting for good.
      if (waiting.size > 0) setImmediate(drain);
      else draining = false;
    }
  };

  return (req, res, next) => {
    if (PROBES.has(req.path)) return next();
    if (passStarted === undefined) {
      passStarted = clock();
      setImmediate(endPass);
    }
    if (!draining && clock() - passStarted < budgetMs) return next();
    const client = clientOf(req);
    const queue = waiting.get(client);
    // A client that left while waiting is not started (its response or its connection is closed).
    const start = () => (res.destroyed || req.socket?.destroyed ? undefined : next());
    if (queue) queue.push(start);
    else waiting.set(client, [start]);
    if (!draining) {
      draining = true;
      setImmediate(drain);
    }
  };
}
