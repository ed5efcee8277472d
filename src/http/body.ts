import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from './errors';

const TAKES_BODY = new Set(['POST', 'PUT', 'PATCH']);
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * Every POST, PUT and PATCH route takes a JSON object: an empty request is refused (body-parser would
 * read it as `{}`, which a PATCH would accept as a no-op), and a body that is not JSON is a 415.
 */
function requireJsonBody(req: Request, _res: Response, next: NextFunction) {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) {
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON (Content-Type: application/json)');
  }
  // JSON is UTF-8 (RFC 8259); body-parser would also decode UTF-16 and UTF-32, which nothing here expects.
  const charset = CHARSET.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (hasBody && charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body must be UTF-8 JSON');
  }
  if (!hasBody && TAKES_BODY.has(req.method)) {
    throw new AppError(400, 'VALIDATION_ERROR', 'A JSON object body is required (Content-Type: application/json)', [
      { path: '(body)', message: 'is required' },
    ]);
  }
  next();
}

/** Stands in `req.body` for a body that could not be read; parseBody (http/validate.ts) throws its error. */
export class BodyFailure {
  constructor(readonly error: unknown) {}
}

/**
 * Reads the JSON body, but a body that is missing or unreadable fails only the route that reads it:
 * routes are matched after this runs, and a request for no route must answer 404 whatever its body.
 * Every route that takes a body reads it through parseBody, which throws the kept error (400, 413,
 * 415 as before); a route that takes none (GET, DELETE) ignores it.
 */
export function jsonBody(): RequestHandler {
  const steps: RequestHandler[] = [
    requireJsonBody,
    express.json({ limit: '100kb', strict: true, type: ['application/json', 'application/*+json'] }),
  ];
  return (req, res, next) => {
    let done = 0;
    const step = (err?: unknown) => {
      if (err) {
        req.body = new BodyFailure(err);
        return next();
      }
      const handler = steps[done++];
      if (!handler) return next();
      try {
        void handler(req, res, step);
      } catch (thrown) {
        step(thrown);
      }
    };
    step();
  };
}
