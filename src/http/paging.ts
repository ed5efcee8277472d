import type { Request, Response } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { fieldError } from './errors';
import { sendSuccess } from './respond';
import { isUuid, parseQuery } from './validate';

/*
 * Keyset pagination of every list route (docs/api.md, "Pagination"). A list has a total order: sort
 * keys ending in a key unique within the list (an id). A page is the first `limit` rows after the
 * cursor in that order; the cursor is the sort keys of the last row of the previous page, so a page
 * costs an index range scan however deep it is (never an offset, which reads every row before it),
 * and rows written meanwhile never shift the pages: none is skipped or repeated.
 */

/** The largest page, and the page when `limit` is not given. */
export const MAX_PAGE = 1000;

/** How a sort key is written in a cursor (as PostgreSQL's text of it) and read back (cast from it). */
type KeyType = 'text' | 'uuid' | 'timestamptz' | 'date' | 'integer';

type SortKey = { sql: string; type: KeyType; descending?: boolean };

/**
 * A list's order: its sort keys (SQL over the list's query), never null, the last one unique within the
 * list; `list` names its cursors, so a cursor of another list is refused.
 */
export type ListOrder = { list: string; keys: readonly [SortKey, ...SortKey[]] };

/** A page asked for: at most `limit` rows after the row whose sort keys are `after` (none: from the first). */
export type PageRequest = { limit: number; after: readonly string[] | null };

/** A page of rows and the cursor of the next page (null on the last). */
export type Page<Row> = { rows: Row[]; next: string | null };

/** The first page of the largest size (for a lookup of one row through a list's query). */
export const FIRST_PAGE: PageRequest = { limit: MAX_PAGE, after: null };

const LIMIT = /^[0-9]{1,4}$/;

/** A page's `limit` as a query parameter: a whole number from 1 to MAX_PAGE, as text (every list's, and the event feed's). */
export const pageLimit = z
  .string()
  .regex(LIMIT, `must be a whole number from 1 to ${MAX_PAGE}`)
  .refine((text) => Number(text) >= 1 && Number(text) <= MAX_PAGE, `must be a whole number from 1 to ${MAX_PAGE}`);

/** The query of a list route: `limit` and `after`, nothing else (an unknown parameter is a 400). */
export const pageQuery = z
  .object({
    limit: pageLimit.optional().describe(`The most rows in the page, 1 to ${MAX_PAGE} (default ${MAX_PAGE})`),
    after: z
      .string()
      .max(4096, 'is not a cursor of this list')
      .optional()
      .describe('Opaque cursor: the page after the one whose `Link: <...>; rel="next"` header carried it'),
  })
  .strict();

const CURSOR_ERROR = 'is not a cursor of this list: take it from the Link header of the page before';

/** PostgreSQL's text of a timestamptz (ISO date style, any zone offset), checked as a real instant. */
const TIMESTAMP_TEXT = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?([+-]\d{2})(:\d{2}(:\d{2})?)?$/;

function isCalendar(y: string, m: string, d: string): boolean {
  if (y === '') return false;
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}

/** Whether a cursor's value can be cast to its key's type (a value that cannot would be a database error, not a 400). */
function fitsType(value: unknown, type: KeyType): value is string {
  if (typeof value !== 'string') return false;
  switch (type) {
    case 'text':
      return !value.includes('\u0000');
    case 'uuid':
      return isUuid(value);
    case 'integer':
      return /^-?[0-9]{1,10}$/.test(value) && Math.abs(Number(value)) <= 2 ** 31 - 1;
    case 'date': {
      const [, y = '', m = '', d = ''] = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) ?? [];
      return isCalendar(y, m, d);
    }
    case 'timestamptz': {
      const [, y = '', m = '', d = '', hour = '', minute = '', second = ''] = TIMESTAMP_TEXT.exec(value) ?? [];
      return isCalendar(y, m, d) && Number(hour) < 24 && Number(minute) < 60 && Number(second) < 60;
    }
  }
}

/** A cursor: the list's name and the last row's sort keys, as base64url of a JSON array (opaque to clients). */
function encodeCursor(order: ListOrder, keys: readonly string[]): string {
  return Buffer.from(JSON.stringify([order.list, ...keys]), 'utf8').toString('base64url');
}

function decodeCursor(order: ListOrder, cursor: string): string[] {
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw fieldError('after', CURSOR_ERROR);
  }
  if (!Array.isArray(decoded) || decoded.length !== order.keys.length + 1 || decoded[0] !== order.list) throw fieldError('after', CURSOR_ERROR);
  const keys = decoded.slice(1);
  const fits = keys.every((value, i) => {
    const key = order.keys[i];
    return key !== undefined && fitsType(value, key.type);
  });
  if (!fits) throw fieldError('after', CURSOR_ERROR);
  return keys as string[];
}

/** The page a list route's query asks for (400 naming `limit` or `after` for a bad one). */
export function parsePage(query: z.infer<typeof pageQuery>, order: ListOrder): PageRequest {
  return {
    limit: query.limit === undefined ? MAX_PAGE : Number(query.limit),
    after: query.after === undefined ? null : decodeCursor(order, query.after),
  };
}

/** The page a list route's request asks for (400 naming `limit` or `after`, or an unknown parameter). */
export function pageOf(req: Request, order: ListOrder): PageRequest {
  return parsePage(parseQuery(pageQuery, req.query), order);
}

/**
 * SQL of a page of a list, to put into the list's query (named bindings, all prefixed `page_`):
 *   - `keys`: select-list items carrying the sort keys' text, for the cursor (see takePage);
 *   - `after`: the condition of the rows after the cursor (`true` on the first page);
 *   - `orderBy`: the list's order; `limit`: one row more than the page, to tell whether one follows.
 */
export type PageSql = { keys: string; after: string; orderBy: string; limit: string; bindings: Record<string, string | number> };

const keyAlias = (i: number) => `page_key_${i}`;

export function pageSql(order: ListOrder, page: PageRequest): PageSql {
  const { keys } = order;
  const bindings: Record<string, string | number> = { page_limit: page.limit + 1 };
  let after = 'true';
  if (page.after) {
    const value = (key: SortKey, i: number) => `cast(:page_after_${i} as ${key.type})`;
    page.after.forEach((text, i) => (bindings[`page_after_${i}`] = text));
    // Lexicographic "after" in the list's order: some key beyond the cursor's, every key before it equal.
    const beyond = keys.map((key, i) => {
      const equal = keys.slice(0, i).map((before, j) => `${before.sql} = ${value(before, j)}`);
      return `(${[...equal, `${key.sql} ${key.descending ? '<' : '>'} ${value(key, i)}`].join(' and ')})`;
    });
    // The first key's bound on its own lets the index's range scan start at the cursor.
    const [first] = keys;
    after = `${first.sql} ${first.descending ? '<=' : '>='} ${value(first, 0)} and (${beyond.join(' or ')})`;
  }
  return {
    keys: keys.map((key, i) => `cast(${key.sql} as text) as ${keyAlias(i)}`).join(', '),
    after,
    orderBy: keys.map((key) => `${key.sql} ${key.descending ? 'desc' : 'asc'}`).join(', '),
    limit: ':page_limit',
    bindings,
  };
}

/** A list's query builder narrowed to a page of it (its select list gains the sort keys: see takePage). */
export function pagedQuery(db: Knex, query: Knex.QueryBuilder, order: ListOrder, page: PageRequest): Knex.QueryBuilder {
  const sql = pageSql(order, page);
  return query
    .select(db.raw(sql.keys))
    .whereRaw(sql.after, sql.bindings)
    .orderByRaw(sql.orderBy)
    .limit(page.limit + 1);
}

/** The page out of the rows of a paged query (limit + 1 rows at most), without their sort keys' columns. */
export function takePage<Row extends object>(rows: readonly Row[], order: ListOrder, page: PageRequest): Page<Row> {
  const strip = (row: Row): Row => {
    const copy = { ...row } as Record<string, unknown>;
    order.keys.forEach((_key, i) => delete copy[keyAlias(i)]);
    return copy as Row;
  };
  const kept = rows.slice(0, page.limit);
  const last = kept.at(-1) as Record<string, unknown> | undefined;
  const next = rows.length > page.limit && last ? encodeCursor(order, order.keys.map((_key, i) => String(last[keyAlias(i)]))) : null;
  return { rows: kept.map(strip), next };
}

/**
 * Announces the next page, if any, as GitHub's API does: `Link: </api/...?after=...>; rel="next"`, the
 * request's own path and query with `after` set. The URL is relative (path-absolute, resolved against
 * the URL the client called): behind a proxy the service does not know the origin its clients use.
 */
export function linkNext(req: Request, res: Response, next: string | null): void {
  if (next === null) return;
  const url = req.originalUrl;
  const mark = url.indexOf('?');
  const params = new URLSearchParams(mark < 0 ? '' : url.slice(mark + 1));
  params.set('after', next);
  res.setHeader('Link', `<${mark < 0 ? url : url.slice(0, mark)}?${params.toString()}>; rel="next"`);
}

/** Every row of a list, page after page (for the command-line tools, which list whole). */
export async function* everyRow<Row>(order: ListOrder, fetch: (page: PageRequest) => Promise<Page<Row>>): AsyncGenerator<Row> {
  let page = FIRST_PAGE;
  for (;;) {
    const { rows, next } = await fetch(page);
    yield* rows;
    if (next === null) return;
    page = { limit: MAX_PAGE, after: decodeCursor(order, next) };
  }
}

/** Answers a page: its rows as the body (the list's array, as without paging), the next page in `Link`. */
export function sendPage(req: Request, res: Response, page: Page<unknown>): void {
  linkNext(req, res, page.next);
  sendSuccess(res, page.rows);
}
