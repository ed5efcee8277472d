import type { Response } from 'express';
import DecimalJs from 'decimal.js';

/*
 * Decimals are written into the JSON as exact number literals (never via binary floating point), so
 * 0.1 + 0.2 appears as 0.3 and large sums keep every digit. JSON.stringify has no raw-number hook on
 * Node 20 (JSON.rawJSON came later), so responses are written by a small serializer of our own that
 * follows JSON.stringify's rules for everything else: strings go through JSON.stringify, objects with
 * a toJSON (dates) are converted, undefined object fields are left out and undefined array items
 * become null. Text that is already JSON (figures PostgreSQL summed, stored breakdown parts) is
 * wrapped in JsonText and written as it is.
 */

/** A fragment that is already valid JSON: a numeric literal, an array or an object rendered earlier. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A numeric column's text (PostgreSQL's numeric output: plain digits, no exponent) as a JSON number. */
export function numericJson(text: string): JsonText {
  return new JsonText(text);
}

function write(value: unknown, inArray: boolean): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return inArray ? 'null' : undefined;
    case 'bigint':
      throw new TypeError('BigInt value in a JSON response');
  }
  if (value === null) return 'null';
  if (value instanceof JsonText) return value.text;
  if (DecimalJs.isDecimal(value)) {
    const decimal = value as DecimalJs;
    if (!decimal.isFinite()) throw new TypeError('Non-finite decimal in a JSON response');
    return decimal.isZero() ? '0' : decimal.toFixed();
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + write(value[i], true);
    return out + ']';
  }
  const object = value as Record<string, unknown> & { toJSON?: () => unknown };
  if (typeof object.toJSON === 'function') return write(object.toJSON(), inArray);
  let out = '{';
  let first = true;
  for (const key of Object.keys(object)) {
    const field = write(object[key], false);
    if (field === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + field;
    first = false;
  }
  return out + '}';
}

export function toJson(value: unknown): string {
  return write(value, false) ?? 'null';
}

/** A response body as UTF-8 bytes, encoded once (a 10,000-task list is megabytes). */
export function jsonBytes(payload: unknown): Buffer {
  return Buffer.from(toJson(payload), 'utf8');
}

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

/** The success envelope of CONTRACT section 2. */
export function successEnvelope(body: unknown) {
  return { success: true, body };
}

export function sendSuccess(res: Response, body: unknown, status = 200): void {
  sendJson(res, status, successEnvelope(body));
}
