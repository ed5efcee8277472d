import type { Response } from 'express';
import { jsonBytes } from '../json';

/* Responses are written by the service's JSON writer (src/json.ts): exact decimals, stored JSON as it is. */
export { JsonText, jsonArrayInTurns, jsonBytes, numericJson, toJson } from '../json';

/** Writes JSON bytes without Express's ETag/freshness logic, so an ETag we set never turns into a 304. */
export function sendJsonBytes(res: Response, status: number, body: Buffer): void {
  res.status(status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

export function sendJson(res: Response, status: number, payload: unknown): void {
  sendJsonBytes(res, status, jsonBytes(payload));
}

/** The success envelope (docs/api.md, The envelope). */
export function successEnvelope(body: unknown) {
  return { success: true, body };
}

export function sendSuccess(res: Response, body: unknown, status = 200): void {
  sendJson(res, status, successEnvelope(body));
}
