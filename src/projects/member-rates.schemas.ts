import { z } from 'zod';
import { decimalNumber, isoDate } from '../http/validate';
import { exactDecimal, id, timestamp } from '../openapi/common';
import { MAX_AMOUNT, RATE_UNITS } from './projects.schemas';

// Decimals are checked against the project's currency by the service.
const rate = (what: string) =>
  decimalNumber({ min: 0, max: MAX_AMOUNT })
    .nullable()
    .optional()
    .describe(`${what} per unit (the project's rate_unit); null: the role's rate applies; left out: the member's own rate in force on effective_from is kept`);

export const memberRatesBody = z
  .object({
    hourly_rate: rate('What a unit of the member\'s work costs'),
    bill_rate: rate('What a unit of the member\'s work is billed'),
    effective_from: isoDate().optional().describe('The day the rates take effect (YYYY-MM-DD; default today in the project\'s time zone)'),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.hourly_rate !== undefined || body.bill_rate !== undefined) return;
    for (const path of ['hourly_rate', 'bill_rate']) {
      ctx.addIssue({ code: 'custom', path: [path], message: 'at least one of hourly_rate and bill_rate is required (a number or null)' });
    }
  });

export type MemberRatesBody = z.infer<typeof memberRatesBody>;

export const rateExplanationQuery = z
  .object({ date: isoDate().optional().describe('The day to explain (YYYY-MM-DD; default today in the project\'s time zone)') })
  .strict();

const date = (what: string) => z.string().regex(/^\d{4}-\d{2}-\d{2}$/).describe(`${what} (YYYY-MM-DD)`);

const override = z.object({
  hourly_rate: exactDecimal('The member\'s own cost rate per unit').nullable().describe('null: its role\'s cost rate applies'),
  bill_rate: exactDecimal('The member\'s own bill rate per unit').nullable().describe('null: its role\'s bill rate applies'),
  effective_from: date('The day the entry takes effect'),
  written_at: timestamp(),
  written_by: z.string().nullable().describe('Name of the token that wrote it'),
});

const overrides = z.array(override).describe('The member\'s own rate entries in the project, by the day each takes effect');

export const memberRatesResponse = z.object({
  project_id: id(),
  team_member_id: id(),
  currency: z.string(),
  rate_unit: z.enum(RATE_UNITS),
  overrides,
});

const resolved = (what: string) =>
  z
    .object({
      amount: exactDecimal(`The ${what} in force per unit (0 for none)`),
      source: z.enum(['member', 'role', 'none']).describe('member: its own entry; role: its role\'s in the rate card; none: neither has one'),
      effective_from: date('The day the entry that decided took effect').nullable().describe('null for source "none"'),
    })
    .describe(`The member's ${what} on the day, resolved on its own`);

export const rateExplanationResponse = z.object({
  project_id: id(),
  team_member_id: id(),
  date: date('The day explained'),
  rate_unit: z.enum(RATE_UNITS),
  job_role: z.object({ id: id(), name: z.string() }).nullable().describe('The member\'s role in the project on the day (null: none)'),
  hourly_rate: resolved('cost rate'),
  bill_rate: resolved('bill rate'),
  overrides,
});
