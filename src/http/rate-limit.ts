import { rateLimit as expressRateLimit } from 'express-rate-limit';
import { AppError } from './errors';

/**
 * A per-client limit on /api, counted per address (req.ip: behind a proxy trusted by TRUST_PROXY, the
 * client's) in fixed one-minute windows (in this process: behind a
 * load balancer each instance counts its own). The default, 12,000 a minute, is 200 a second: no
 * normal client notices it.
 */
export function rateLimit(perMinute: number) {
  return expressRateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    // The client is req.ip, as TRUST_PROXY says (config.ts refuses `true`). A client's own
    // X-Forwarded-For sent to an untrusted hop is ignored, not a misconfiguration to print a stack for.
    validate: { xForwardedForHeader: false },
    handler: (_req, _res, next) => {
      next(new AppError(429, 'RATE_LIMITED', `Too many requests: at most ${perMinute} a minute per client`));
    },
  });
}
