import cors from 'cors';
import type { RequestHandler } from 'express';

/** Headers a frontend on another origin may read: the finance version, export file names, tracing, back-off, next pages. */
const EXPOSED = ['ETag', 'Content-Disposition', 'X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'Link'];

/**
 * CORS for the origins in CORS_ORIGINS. Mounted before authentication, so an allowed origin's preflight
 * is answered (204) without a token and every answer, errors included, carries the CORS headers.
 * Any other origin (and every origin when the list is empty) gets no CORS header at all.
 */
export function corsFor(origins: readonly string[]): RequestHandler {
  const allowed = new Set(origins);
  const options: cors.CorsOptions = {
    origin: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'X-Request-Id'],
    exposedHeaders: EXPOSED,
    maxAge: 600,
  };
  return cors((req, callback) => {
    const origin = req.headers.origin;
    callback(null, origin !== undefined && allowed.has(origin) ? options : { origin: false });
  });
}
