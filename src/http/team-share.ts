import type { NextFunction, Request, Response } from 'express';
import { actorOf } from './auth';
import { AppError } from './errors';

/*
 * One team cannot take every database connection of an instance. Each team runs at most `perTeam`
 * API requests at once here; further ones wait in memory, in arrival order, holding no connection,
 * and past `queuePerTeam` waiting ones a request is answered 429 at once with Retry-After. A team that
 * floods one busy task therefore ties up at most `perTeam` connections (waiting for its project's
 * lock), and every other team's requests find the rest of the pool free.
 */
export type TeamShare = { perTeam: number; queuePerTeam: number };

type Lane = { running: number; waiting: (() => void)[] };

export function teamShare({ perTeam, queuePerTeam }: TeamShare) {
  const lanes = new Map<string, Lane>();

  const release = (teamId: string, lane: Lane) => {
    const next = lane.waiting.shift();
    if (next) return next();
    lane.running--;
    if (lane.running === 0) lanes.delete(teamId);
  };

  return (req: Request, res: Response, next: NextFunction) => {
    const { teamId } = actorOf(req);
    let lane = lanes.get(teamId);
    if (!lane) lanes.set(teamId, (lane = { running: 0, waiting: [] }));
    const current = lane;

    const start = () => {
      // 'close' follows a complete response as well as a client that left: the slot is always returned.
      res.once('close', () => release(teamId, current));
      next();
    };
    if (current.running < perTeam) {
      current.running++;
      return start();
    }
    if (current.waiting.length >= queuePerTeam) {
      res.setHeader('Retry-After', '1');
      throw new AppError(429, 'RATE_LIMITED', `Too many requests at once for this team: at most ${perTeam} run and ${queuePerTeam} wait`);
    }
    const turn = () => (res.destroyed ? release(teamId, current) : start());
    current.waiting.push(turn);
    // A client that leaves while waiting gives up its place.
    res.once('close', () => {
      const index = current.waiting.indexOf(turn);
      if (index >= 0) current.waiting.splice(index, 1);
    });
  };
}
