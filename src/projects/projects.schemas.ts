import { z } from 'zod';
import { decimalNumber, isoDate, name, uuid } from '../http/validate';
import { exactDecimal, id, timestamp } from '../openapi/common';
import { AMOUNT_FIGURES, LABOR_COST_FIGURES } from '../finance/rules/figures';
import { figureFields } from '../finance/http/figure-schemas';

export const MAX_AMOUNT = 1_000_000_000;

const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code in capitals, e.g. USD');

// Decimals are checked against the project's currency by the service.
const amount = () => decimalNumber({ min: 0, max: MAX_AMOUNT });

// Checked against the zones the runtime and the database know by the service.
const timeZone = z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters').describe('IANA time zone, e.g. Europe/Paris');

/** Budgets (docs/finance-rules.md R28): hours, how they count, and the alert percentages. */
const budgetFields = {
  hours_budget: decimalNumber({ min: 0, max: MAX_AMOUNT, decimals: 2 }).nullable().optional().describe('Hours budget (2 decimals), or null for none'),
  budget_period: z
    .enum(['total', 'month'], { error: 'must be "total" or "month"' })
    .optional()
    .describe('"total": the budgets count the project\'s whole life; "month": each month in the project\'s time zone, fixed costs left out'),
  budget_alerts: z
    // Items checked as a whole, so that every error names the field itself (budget_alerts), with the item.
    .array(z.unknown().meta({ type: 'integer', minimum: 1, maximum: 1000 }), { error: 'must be an array of percentages' })
    .max(100, 'must have at most 100 percentages')
    .superRefine((alerts, ctx) => {
      const bad = alerts.findIndex((p) => typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 1000);
      if (bad >= 0) ctx.addIssue({ code: 'custom', message: `must hold whole numbers from 1 to 1000 (item ${bad} is ${JSON.stringify(alerts[bad])})` });
      else if (new Set(alerts).size !== alerts.length) ctx.addIssue({ code: 'custom', message: 'must not repeat a percentage' });
    })
    .transform((alerts) => alerts as number[])
    .optional()
    .describe('Whole percentages of each budget, 1 to 1000, distinct (default [80, 100]): spent reaching one records a budget.threshold_crossed event'),
};

export const RATE_UNITS = ['hour', 'day'] as const;

const rateUnit = z
  .enum(RATE_UNITS, { error: 'must be "hour" or "day"' })
  .describe('What every rate entered in the project (card and overrides) is per (default "hour")');

const hoursPerDay = decimalNumber({ min: 0, max: 24, decimals: 2 })
  .refine((hours) => hours > 0, 'must be greater than 0')
  .describe('Hours in a day of a "day" project: > 0, <= 24, at most 2 decimals (default 8)');

export const createProjectBody = z
  .object({
    name: name(200),
    currency: currency.optional(),
    budget: amount().nullable().optional(),
    time_zone: timeZone.optional(),
    rate_unit: rateUnit.optional(),
    hours_per_day: hoursPerDay.optional(),
    ...budgetFields,
  })
  .strict();

export const updateProjectBody = z
  .object({
    name: name(200).optional(),
    currency: currency.optional(),
    budget: amount().nullable().optional(),
    time_zone: timeZone.optional(),
    rate_unit: rateUnit.optional().describe('409 while the project has any rate entry (card or member overrides)'),
    hours_per_day: hoursPerDay.optional().describe('409 while the project has any rate entry (card or member overrides)'),
    ...budgetFields,
  })
  .strict();

const effectiveFrom = () => isoDate().optional().describe('The day the change takes effect (YYYY-MM-DD; default today in the project\'s time zone)');

export const rateCardBody = z
  .object({
    roles: z
      .array(
        z
          .object({
            job_role_id: uuid(),
            hourly_rate: amount().nullable().describe('What a unit (hour or day) of the role costs; null: no cost rate from that day'),
            bill_rate: amount().nullable().optional().describe('What a unit of the role is billed; null: no bill rate from that day; left out: the role keeps the bill rate it has on effective_from'),
          })
          .strict(),
      )
      .max(1000, 'must have at most 1000 entries'),
    effective_from: effectiveFrom(),
  })
  .strict();

export type RateCardBody = z.infer<typeof rateCardBody>;

export const rateCardQuery = z
  .object({ date: isoDate().optional().describe('The day whose card to answer (YYYY-MM-DD; default today in the project\'s time zone)') })
  .strict();

export const projectMemberBody = z.object({ job_role_id: uuid().nullable(), effective_from: effectiveFrom() }).strict();

export const projectResponse = z.object({
  id: id(),
  name: z.string(),
  currency: z.string(),
  budget: exactDecimal('Budget in the project currency').nullable(),
  hours_budget: exactDecimal('Hours budget').nullable(),
  budget_period: z.enum(['total', 'month']).describe('How the budgets count: the project\'s whole life, or each month in its time zone'),
  budget_alerts: z.array(z.number().int()).describe('Alert percentages of each budget, ascending'),
  time_zone: z.string().describe('IANA time zone: a time log\'s day and "today" are taken in it'),
  rate_unit: z.enum(RATE_UNITS).describe('What every rate entered in the project is per'),
  hours_per_day: exactDecimal('Hours in a day of a "day" project'),
  created_at: timestamp(),
  updated_at: timestamp(),
});

const date = (what: string) => z.string().regex(/^\d{4}-\d{2}-\d{2}$/).describe(`${what} (YYYY-MM-DD)`);

export const rateCardResponse = z.object({
  project_id: id(),
  currency: z.string(),
  date: date('The day this card is in force on'),
  roles: z.array(
    z.object({
      job_role_id: id(),
      job_role_name: z.string(),
      hourly_rate: exactDecimal('Cost rate per unit (the project\'s rate_unit)').nullable().describe('null: the role has only a bill rate'),
      bill_rate: exactDecimal('Bill rate per unit (the project\'s rate_unit)').nullable().describe('null: the role has no bill rate'),
      effective_from: date('The day this rate took effect'),
    }),
  ),
});

export const rateCardHistoryResponse = z.object({
  project_id: id(),
  currency: z.string(),
  entries: z.array(
    z.object({
      job_role_id: id(),
      job_role_name: z.string(),
      hourly_rate: exactDecimal('Cost rate per unit').nullable().describe('null: the role has no cost rate from that day'),
      bill_rate: exactDecimal('Bill rate per unit').nullable().describe('null: the role has no bill rate from that day'),
      effective_from: date('The day the entry takes effect'),
      written_at: timestamp(),
      written_by: z.string().nullable().describe('Name of the token that wrote it (null for entries older than this history)'),
    }),
  ),
});

export const projectMemberResponse = z.object({
  project_id: id(),
  team_member_id: id(),
  name: z.string(),
  job_role_id: id().nullable().describe('The member\'s job role today'),
  job_role_name: z.string().nullable(),
  roles: z
    .array(z.object({ job_role_id: id().nullable(), job_role_name: z.string().nullable(), effective_from: date('The day it takes effect') }))
    .describe('The member\'s roles in the project by the day each takes effect; the first (dated 1970-01-01) counts from the beginning of time'),
});

const projectTotals = z.object(figureFields(AMOUNT_FIGURES, 'Sum'));
const taskCosts = z.object(figureFields(LABOR_COST_FIGURES, 'The task\'s own'));

export const ratePreviewResponse = z.object({
  project_id: id(),
  currency: z.string(),
  effective_from: date('The day the previewed card would take effect'),
  project_totals: z.object({ before: projectTotals, after: projectTotals }).describe('The unfiltered project list\'s totals before and after'),
  tasks: z
    .array(z.object({ id: id(), name: z.string(), before: taskCosts, after: taskCosts }))
    .describe('Every task whose own figures (its breakdown) would change, in creation order'),
});
