import { z } from 'zod';
import { BodyFailure } from './body';
import { AppError, ErrorCode, ErrorDetail, fieldError, validationError } from './errors';
import { decimalPlaces, minorUnit } from '../finance/rules/money';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Whether `value` is a UUID (any case). */
export const isUuid = (value: string): boolean => UUID.test(value);

// Control characters (C0, DEL, C1) are refused in every text field; notes may still hold tabs and newlines.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROL_CHARS_EXCEPT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** Ids match case-insensitively: PostgreSQL prints them in lower case, so a body's id is lowered too. */
export const uuid = () => z.string().regex(UUID, 'must be a UUID').toLowerCase();

export const name = (max = 200) =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine((text) => !CONTROL_CHARS.test(text), 'must not contain control characters');

export const note = (max = 2000) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((text) => !CONTROL_CHARS_EXCEPT_LINES.test(text), 'must not contain control characters');

/** The first and last dates the service knows (the beginning of time for dated rates and roles: 1970-01-01). */
export const FIRST_DATE = '1970-01-01';
export const LAST_DATE = '9999-12-31';

/**
 * The first day a time log can fall on: the first logs the service takes (from 1970-01-01T00:00Z) fall
 * on 1969-12-31 in a project west of UTC, and a date range must be able to reach them.
 */
export const FIRST_LOG_DAY = '1969-12-31';

/** Whether `text` is a real calendar date written YYYY-MM-DD. */
function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const parsed = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === text;
}

/** A calendar date, YYYY-MM-DD, from `first` (1970-01-01 unless said) to 9999-12-31. */
export const isoDate = (first = FIRST_DATE) =>
  z
    .string()
    .refine(isCalendarDate, 'must be a date written YYYY-MM-DD, e.g. 2026-11-20')
    .refine((text) => text >= first && text <= LAST_DATE, `must be between ${first} and ${LAST_DATE}`);

/** Whether an optional from/to pair is in order (a range check for superRefine). */
export function checkDateRange(range: { from?: string; to?: string }, ctx: z.RefinementCtx): void {
  if (range.from !== undefined && range.to !== undefined && range.from > range.to) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
  }
}

/** A JSON number (never a string), finite, within bounds, with at most `decimals` digits after the point. */
export const decimalNumber = (opts: { min: number; max: number; decimals?: number }) => {
  const base = z
    .number({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a JSON number') })
    .min(opts.min, `must be at least ${opts.min}`)
    .max(opts.max, `must be at most ${opts.max}`);
  if (opts.decimals === undefined) return base;
  const decimals = opts.decimals;
  return base.refine((value) => decimalPlaces(value) <= decimals, `must have at most ${decimals} decimals`);
};

export const isoTimestamp = () =>
  z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp with offset, e.g. 2026-11-20T09:30:00Z' });

function detailsOf(error: z.ZodError): ErrorDetail[] {
  return error.issues.flatMap((issue) => {
    const at = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: at ? `${at}.${key}` : key, message: 'is not a known field' }));
    }
    return [{ path: at || '(body)', message: issue.message }];
  });
}

function describe(details: ErrorDetail[]): string {
  return details.map((d) => `${d.path} ${d.message}`).join('; ');
}

/** Parses a JSON body; a body that could not be read (missing, malformed, not JSON) throws why (http/body.ts). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body instanceof BodyFailure) throw body.error;
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const details = detailsOf(parsed.error);
  throw validationError(`Invalid request body: ${describe(details)}`, details);
}

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const parsed = schema.safeParse(query ?? {});
  if (parsed.success) return parsed.data;
  const details = detailsOf(parsed.error);
  throw validationError(`Invalid query: ${describe(details)}`, details);
}

/** A path id that is not a UUID is a 400, never a lookup. */
export function parseId(value: unknown, label = 'id', code: ErrorCode = 'INVALID_ID'): string {
  if (typeof value === 'string' && isUuid(value)) return value.toLowerCase();
  throw new AppError(400, code, `${label} must be a UUID`, [{ path: label, message: 'must be a UUID' }]);
}

/** An amount in a currency may not have more decimals than the currency's minor unit (1.5 JPY is refused). */
export function checkAmountDecimals(path: string, value: number, currency: string): void {
  const allowed = minorUnit(currency);
  if (decimalPlaces(value) > allowed) {
    throw fieldError(path, `must have at most ${allowed} decimals for ${currency}`);
  }
}
