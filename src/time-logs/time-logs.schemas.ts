import { z } from 'zod';
import { secondsFromHours } from '../finance/rules/money';
import { FIRST_DATE, decimalNumber, isoTimestamp, note, uuid } from '../http/validate';
import { exactDecimal, id, timestamp } from '../openapi/common';

/** One log covers at most 10,000 hours; that also keeps seconds well inside a 32-bit integer. */
export const MAX_LOG_HOURS = 10_000;

export const createTimeLogBody = z
  .object({
    team_member_id: uuid(),
    hours: decimalNumber({ min: 0, max: MAX_LOG_HOURS })
      .refine((value) => value > 0, 'must be greater than 0')
      .refine((value) => secondsFromHours(value) >= 1, 'must be at least one second')
      .optional(),
    seconds: z
      .number({ error: 'must be a JSON number' })
      .int('must be a whole number')
      .min(1, 'must be greater than 0')
      .max(MAX_LOG_HOURS * 3600, `must be at most ${MAX_LOG_HOURS * 3600}`)
      .optional(),
    logged_at: isoTimestamp()
      .refine((text) => Date.parse(text) >= Date.parse(`${FIRST_DATE}T00:00:00Z`), `must not be before ${FIRST_DATE}`)
      .optional(),
    note: note().nullable().optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.hours === undefined) === (body.seconds === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['hours'], message: 'exactly one of hours or seconds is required' });
    }
  });

export type CreateTimeLogBody = z.infer<typeof createTimeLogBody>;

export const timeLogResponse = z.object({
  id: id(),
  task_id: id(),
  team_member_id: id(),
  seconds: z.number().int(),
  hours: exactDecimal('seconds / 3600, rounded to 2 decimals'),
  logged_at: timestamp(),
  note: z.string().nullable(),
  created_at: timestamp(),
});
