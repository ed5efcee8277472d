import type { Response } from 'express';
import { QueueFull, TeamLimiter } from '../limiter';
import { AppError } from './errors';

/**
 * Runs `work`, which answers the request, in one of the team's turns (limiter.ts's TeamLimiter). Past
 * the team's queue the answer is 429 with Retry-After, as the rate limits answer; a client that
 * leaves while waiting gives up its place, and nobody is left to answer.
 */
export async function inTeamTurn(turns: TeamLimiter, teamId: string, res: Response, work: () => Promise<void>): Promise<void> {
  const left = new AbortController();
  const leave = () => left.abort();
  res.once('close', leave);
  try {
    await turns.run(teamId, work, left.signal);
  } catch (err) {
    if (err instanceof QueueFull) {
      res.setHeader('Retry-After', '1');
      throw new AppError(429, 'RATE_LIMITED', 'Too many project lists and exports of this team at once; try again shortly');
    }
    if (left.signal.aborted && err === left.signal.reason) return;
    throw err;
  } finally {
    res.off('close', leave);
  }
}
