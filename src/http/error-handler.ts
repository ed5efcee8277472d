import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger';
import { AppError } from './errors';
import { sendJson } from './respond';

type BodyParserError = Error & { type?: string; status?: number; expose?: boolean };
type DriverError = Error & { code?: string };

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006', '53300']);

/**
 * node-postgres's errors for a connection that went away under a statement or was handed out dead by
 * the pool (they carry no code): the database is unavailable, as with a refused connection. Through
 * knex's query builder the message comes after the statement's text and " - ".
 */
const CONNECTION_LOST =
  /(^| - )(Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

/** Turns anything thrown into the contract's error envelope; only AppError messages reach clients. */
function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as BodyParserError & DriverError;
  switch (e?.type) {
    case 'entity.parse.failed':
      return new AppError(400, 'MALFORMED_JSON', 'The request body is not valid JSON');
    case 'entity.too.large':
      return new AppError(413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 100 KiB');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body must be UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
      return new AppError(400, 'MALFORMED_JSON', 'The request body ended before the length it announced');
  }
  // The router could not percent-decode a path parameter (`/api/tasks/%ZZ`); every one is an id.
  if (err instanceof URIError && e.status === 400) {
    return new AppError(400, 'INVALID_ID', 'A path id is not valid percent-encoding', [{ path: '(path)', message: 'must be a UUID' }]);
  }
  // Any other client error a parser raised (a compressed body that does not decompress): its 4xx stands.
  if (e?.expose && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    if (e.status === 413) return new AppError(413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 100 KiB');
    if (e.status === 415) return new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body must be UTF-8 JSON');
    return new AppError(400, 'MALFORMED_JSON', 'The request body could not be read (is its Content-Encoding right?)');
  }
  if (e?.name === 'KnexTimeoutError' || (e?.code && UNAVAILABLE_CODES.has(e.code)) || CONNECTION_LOST.test(e?.message ?? '')) {
    return new AppError(503, 'SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly');
  }
  if (e?.code === '57014' || /Query read timeout$/.test(e?.message ?? '')) {
    return new AppError(503, 'SERVICE_UNAVAILABLE', 'The database did not answer in time; try again shortly');
  }
  if (e?.code === '55P03') {
    return new AppError(503, 'SERVICE_UNAVAILABLE', 'The data is busy with another change; try again shortly');
  }
  if (e?.code === '40001' || e?.code === '40P01') {
    return new AppError(503, 'SERVICE_UNAVAILABLE', 'The request collided with a concurrent change; try again');
  }
  return new AppError(500, 'INTERNAL_ERROR', 'An unexpected error occurred');
}

/** Whether the request's connection closed before its response was complete. */
function clientLeft(req: Request, res: Response): boolean {
  return !res.writableFinished && (res.destroyed || req.socket?.destroyed === true);
}

/**
 * Whether a statement was cancelled by pg_cancel_backend, as src/db/request-queries.ts does when the
 * client goes away (57014 "due to user request"; a statement timeout is 57014 "due to statement timeout").
 */
function cancelledForClientGone(err: unknown): boolean {
  const e = err as DriverError;
  return e?.code === '57014' && /due to user request$/.test(e.message ?? '');
}

export function errorHandler(logger: Logger) {
  // Express recognises an error handler by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const appError = toAppError(err);
    // The path only: a query string may carry secrets (`?api_key=...`), and logs keep none.
    const where = { method: req.method, path: req.originalUrl.split('?')[0] };
    if (cancelledForClientGone(err) && clientLeft(req, res)) {
      // Not a failure: the client closed its connection first, so its statements were cancelled
      // (src/db/request-queries.ts) and nobody is waiting for an answer.
      logger.info(where, 'client went away; its statements were cancelled');
    } else if (appError.status >= 500) {
      logger.error({ err, ...where }, 'request failed');
    }
    if (res.headersSent) return;
    // Every 503 is temporary (an outage, a time limit, a collision): say when to try again.
    if (appError.status === 503) res.setHeader('Retry-After', '1');
    const error: Record<string, unknown> = { code: appError.code, message: appError.message };
    if (appError.details?.length) error.details = appError.details;
    sendJson(res, appError.status, { success: false, error });
  };
}

export function routeNotFound(req: Request) {
  throw new AppError(404, 'ROUTE_NOT_FOUND', `No route for ${req.method} ${req.path}`);
}
