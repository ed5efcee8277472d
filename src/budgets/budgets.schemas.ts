import { z } from 'zod';
import { exactDecimal, id, timestamp } from '../openapi/common';

export const budgetQuery = z
  .object({
    month: z
      .string()
      .regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month as YYYY-MM, e.g. 2026-11')
      .optional()
      .describe('A monthly budget\'s month (YYYY-MM, in the project\'s time zone; default the current one). Ignored for a "total" budget.'),
  })
  .strict();

const use = (what: string) =>
  z.object({
    budget: exactDecimal(`The ${what} budget`).nullable(),
    spent: exactDecimal(`${what === 'money' ? 'Money' : 'Hours'} spent in the period`),
    remaining: exactDecimal('Budget minus spent (negative when over); null for a null or zero budget').nullable(),
    percent_used: exactDecimal('Spent as a percentage of the budget, 2 decimals, may exceed 100; null for a null or zero budget').nullable(),
  });

const day = (what: string) => z.string().regex(/^\d{4}-\d{2}-\d{2}$/).nullable().describe(`${what} (YYYY-MM-DD); null for "total"`);

export const budgetResponse = z.object({
  project_id: id(),
  currency: z.string(),
  period: z.object({ kind: z.enum(['total', 'month']), from: day('First day of the month'), to: day('Last day of the month') }),
  money: use('money'),
  hours: use('hours'),
  alerts: z
    .array(
      z.object({
        kind: z.enum(['money', 'hours']),
        percent: z.number().int(),
        crossed: z.boolean().describe('Whether spent reached this percentage of the budget in the period (recorded once, re-armed when spent falls below)'),
        crossed_at: timestamp().nullable().describe('When the crossing was recorded; null when not crossed'),
      }),
    )
    .describe('Each alert percentage of each budget that is set (money first), ascending'),
});
