import DecimalJs from 'decimal.js';
import { turns } from './turns';

/*
 * The service's JSON writer, for responses (src/http/respond.ts) and for the breakdown parts the
 * finance code stores (src/finance/read-model/labor.ts) alike, so stored figures depend on no HTTP code.
 * Decimals are written into the JSON as exact number literals (never via binary floating point), so
 * 0.1 + 0.2 appears as 0.3 and large sums keep every digit. JSON.stringify has no raw-number hook on
 * Node 20 (JSON.rawJSON came later), so responses are written by a small serializer of our own that
 * follows JSON.stringify's rules for everything else: strings go through JSON.stringify, objects with
 * a toJSON (dates) are converted, undefined object fields are left out and undefined array items
 * become null. Text that is already JSON (figures PostgreSQL summed, stored breakdown parts) is
 * wrapped in JsonText and written as it is.
 */

/**
 * A fragment that is already valid JSON: a numeric literal, an array or an object rendered earlier.
 * Given in pieces (`new JsonText('[', rows, ']')`), they are written one after the other, so a
 * megabyte-long rendered list is never copied into a new string.
 */
export class JsonText {
  readonly pieces: readonly string[];
  constructor(...pieces: string[]) {
    this.pieces = pieces;
  }

  /** Pieces in an array (tens of thousands of them are too many arguments for a call), kept as given: not to be changed after. */
  static of(pieces: readonly string[]): JsonText {
    const text = new JsonText();
    (text as { pieces: readonly string[] }).pieces = pieces;
    return text;
  }
}

/** A numeric column's text (PostgreSQL's numeric output: plain digits, no exponent) as a JSON number. */
export function numericJson(text: string): JsonText {
  return new JsonText(text);
}

/**
 * Pieces at least this long (a breakdown's stored member entries, a list's rows) are kept apart instead
 * of appended, and encoded straight into the response: appended, they were copied once more into one
 * flat string before encoding (a fifth of what a breakdown allocated).
 */
const LARGE_PIECE = 4 * 1024;

/** The text written so far: `done` pieces, then `tail`. */
type Sink = { done: string[]; tail: string };

function emit(sink: Sink, text: string): void {
  if (text.length < LARGE_PIECE) {
    sink.tail += text;
  } else {
    sink.done.push(sink.tail, text);
    sink.tail = '';
  }
}

/** What JSON.stringify leaves out as an object field (and writes as null in an array). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** A value after its toJSON(), as JSON.stringify sees it (decimals are written by `write`). */
function resolved(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === 'function' && !(value instanceof JsonText) && !DecimalJs.isDecimal(value) ? toJSON.call(value) : value;
}

/** Object keys as written before their values (`"key":`), rendered once each: responses repeat a few dozen keys. */
const keyTexts = new Map<string, string>();
const KEY_TEXTS_KEPT = 10_000;

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = `${JSON.stringify(key)}:`;
    if (keyTexts.size < KEY_TEXTS_KEPT) keyTexts.set(key, text);
  }
  return text;
}

function write(sink: Sink, value: unknown): void {
  switch (typeof value) {
    case 'string':
      return emit(sink, JSON.stringify(value));
    case 'number':
      return emit(sink, Number.isFinite(value) ? String(value) : 'null');
    case 'boolean':
      return emit(sink, value ? 'true' : 'false');
    case 'undefined':
    case 'function':
    case 'symbol':
      return emit(sink, 'null'); // only reached inside arrays: object fields are left out before
    case 'bigint':
      throw new TypeError('BigInt value in a JSON response');
  }
  if (value === null) return emit(sink, 'null');
  if (Array.isArray(value)) {
    emit(sink, '[');
    for (let i = 0; i < value.length; i++) {
      if (i) emit(sink, ',');
      write(sink, resolved(value[i]));
    }
    return emit(sink, ']');
  }
  // A plain object (most of what is written) is neither of the two kinds below.
  if (Object.getPrototypeOf(value) !== Object.prototype) {
    if (value instanceof JsonText) {
      for (const piece of value.pieces) emit(sink, piece);
      return;
    }
    if (DecimalJs.isDecimal(value)) {
      const decimal = value as DecimalJs;
      if (!decimal.isFinite()) throw new TypeError('Non-finite decimal in a JSON response');
      return emit(sink, decimal.isZero() ? '0' : decimal.toFixed());
    }
  }
  const object = value as Record<string, unknown>;
  emit(sink, '{');
  let first = true;
  for (const key of Object.keys(object)) {
    const field = resolved(object[key]);
    if (isOmitted(field)) continue;
    emit(sink, first ? keyText(key) : `,${keyText(key)}`);
    write(sink, field);
    first = false;
  }
  emit(sink, '}');
}

/** `value` as JSON in pieces; undefined when JSON.stringify would give undefined. */
function render(value: unknown): Sink | undefined {
  const top = resolved(value);
  if (isOmitted(top)) return undefined;
  const sink: Sink = { done: [], tail: '' };
  write(sink, top);
  sink.done.push(sink.tail);
  return sink;
}

export function toJson(value: unknown): string {
  return render(value)?.done.join('') ?? 'null';
}

/** A response body as UTF-8 bytes, encoded once, piece by piece (a 10,000-task list is megabytes). */
export function jsonBytes(payload: unknown): Buffer {
  const pieces = render(payload)?.done ?? ['null'];
  const lengths = pieces.map((piece) => Buffer.byteLength(piece, 'utf8'));
  const bytes = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + length, 0));
  let offset = 0;
  for (const piece of pieces) offset += bytes.write(piece, offset, 'utf8');
  return bytes;
}


/**
 * An array's JSON rendered a few items at a time, letting other requests run between them (turns.ts):
 * for responses of thousands of items, which would otherwise be rendered in one go when sent.
 */
export async function jsonArrayInTurns(items: readonly unknown[], budgetMs?: number): Promise<JsonText> {
  const pieces: string[] = ['['];
  const pace = turns(budgetMs);
  for (let i = 0; i < items.length; i++) {
    if (pace.due()) await pace.take();
    pieces.push(i ? `,${toJson(items[i])}` : toJson(items[i]));
  }
  pieces.push(']');
  return JsonText.of(pieces);
}
