import type { Response } from 'express';
import DecimalJs from 'decimal.js';

/*
 * Decimals are written into the JSON as exact number literals (never via binary floating point), so
 * 0.1 + 0.2 appears as 0.3 and large sums keep every digit. JSON.stringify has no raw-number hook on
 * Node 20, so decimals pass through as marked strings that are unwrapped after serialising. Every
 * text field refuses control characters, so the marker cannot be forged from input.
 */
const MARK = '\u0000dec:';
const MARKED = /"\\u0000dec:(-?[0-9]+(?:\.[0-9]+)?)"/g;

export function toJson(value: unknown): string {
  const json = JSON.stringify(value, function replace(this: Record<string, unknown>, key, current) {
    // A Decimal has already become a string through its toJSON; anything else passes untouched.
    if (typeof current !== 'string') return current;
    const original = this[key];
    if (DecimalJs.isDecimal(original)) {
      const decimal = original as DecimalJs;
      return MARK + (decimal.isZero() ? '0' : decimal.toFixed());
    }
    return current;
  });
  return json.replace(MARKED, '$1');
}

/** Writes a JSON body without Express's ETag/freshness logic, so an ETag we set never turns into a 304. */
export function sendJson(res: Response, status: number, payload: unknown): void {
  const body = toJson(payload);
  res.status(status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function sendSuccess(res: Response, body: unknown, status = 200): void {
  sendJson(res, status, { success: true, body });
}
