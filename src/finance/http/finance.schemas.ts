import { z } from 'zod';
import { FIRST_LOG_DAY, checkDateRange, isoDate, uuid } from '../../http/validate';
import { fixedCost } from '../../tasks/tasks.schemas';
import { exactDecimal, id, timestamp } from '../../openapi/common';
import { FIGURES, SUMMARY_FIGURES } from '../rules/figures';
import { figureFields, hours, money } from './figure-schemas';

/** `from` / `to`: the log days counted (docs/finance-rules.md R17), in the project's time zone, inclusive, from the first a log can fall on. */
const dayRange = {
  from: isoDate(FIRST_LOG_DAY).optional().describe('Count only time logs on or after this day (YYYY-MM-DD, in the project\'s time zone)'),
  to: isoDate(FIRST_LOG_DAY).optional().describe('Count only time logs on or before this day (YYYY-MM-DD, in the project\'s time zone)'),
};

export const breakdownQuery = z
  .object({ include_subtasks: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'), ...dayRange })
  .strict()
  .superRefine(checkDateRange);

export const BILLABLE_FILTERS = ['all', 'billable', 'non-billable'] as const;
export const GROUP_BY = ['status', 'priority', 'phase'] as const;

export const projectTasksQuery = z
  .object({
    parent_task_id: uuid().optional(),
    billable_filter: z.enum(BILLABLE_FILTERS).default('all'),
    // `phases` is accepted for `phase` (docs/api.md, the project list).
    group_by: z
      .enum([...GROUP_BY, 'phases'])
      .transform((value): (typeof GROUP_BY)[number] => (value === 'phases' ? 'phase' : value))
      .optional(),
    ...dayRange,
  })
  .strict()
  .superRefine(checkDateRange);

export const exportQuery = z
  .object({
    format: z.enum(['csv', 'xlsx']).default('csv'),
    sheet: z
      .enum(['tasks', 'cost_lines'])
      .default('tasks')
      .describe('cost_lines: a CSV file of the tasks\' cost lines instead of the tasks; an XLSX file with a second sheet of them'),
    parent_task_id: uuid().optional(),
    billable_filter: z.enum(BILLABLE_FILTERS).default('all'),
    ...dayRange,
  })
  .strict()
  .superRefine(checkDateRange);

export const fixedCostBody = z.object({ fixed_cost: fixedCost() }).strict();

export type ProjectTasksQuery = z.infer<typeof projectTasksQuery>;

/* Response shapes, for the OpenAPI document. */

export const taskSummary = z.object({
  id: id(),
  name: z.string(),
  project_id: id(),
  billable: z.boolean(),
  currency: z.string().describe('ISO 4217 code of the project'),
  ...figureFields(SUMMARY_FIGURES),
});

const day = (what: string) => z.string().regex(/^\d{4}-\d{2}-\d{2}$/).describe(`${what} (YYYY-MM-DD, in the project's time zone)`);

/** A rate as shown: per hour, or in a "day" project the day rate / hours_per_day rounded to 4 decimals (display only). */
const shownRate = (what: string) =>
  exactDecimal(`${what}; in a "day" project the day rate divided by hours_per_day, rounded to 4 decimals (for display only)`);
const dayRate = (what: string) => exactDecimal(`${what}, per day as entered (only in a "day" project)`).optional();
const rateSource = z.enum(['member', 'role', 'none']);

const costLine = z.object({
  job_role: z.string().describe('The member\'s job role on the line\'s days, "Unassigned" without one'),
  hourly_rate: shownRate('The cost rate resolved on those days (member, else role, else 0)'),
  day_rate: dayRate('The cost rate resolved on those days'),
  bill_rate: shownRate('The bill rate resolved on those days (member, else role, else 0)'),
  day_bill_rate: dayRate('The bill rate resolved on those days'),
  logged_hours: hours('The line\'s logged seconds / 3600'),
  actual_cost: money('logged_hours x cost rate (/ hours_per_day in a "day" project)'),
  actual_revenue: money('logged_hours x bill rate (/ hours_per_day in a "day" project); 0 on a non-billable task'),
  first_day: day('Day of the line\'s first time log'),
  last_day: day('Day of the line\'s last time log'),
});

const memberFigures = z.object({
  team_member_id: id(),
  name: z.string(),
  avatar_url: z.string().nullable(),
  hourly_rate: shownRate('The member\'s cost rate resolved today (its own, else its role\'s, else 0)'),
  day_rate: dayRate('The member\'s cost rate resolved today'),
  bill_rate: shownRate('The member\'s bill rate resolved today (its own, else its role\'s, else 0)'),
  day_bill_rate: dayRate('The member\'s bill rate resolved today'),
  estimated_hours: hours('Share of the estimate'),
  logged_hours: hours('Sum of the cost lines\' logged hours'),
  estimated_cost: money('estimated_hours x today\'s cost rate'),
  actual_cost: money('Sum of the cost lines\' actual costs'),
  estimated_revenue: money('estimated_hours x today\'s bill rate; 0 on a non-billable task'),
  actual_revenue: money('Sum of the cost lines\' actual revenues'),
  cost_rate_source: rateSource.describe('Where today\'s cost rate comes from: the member\'s own entry, its role\'s, or none (0)'),
  bill_rate_source: rateSource.describe('Where today\'s bill rate comes from'),
  cost_lines: z
    .array(costLine)
    .describe('The member\'s logged time grouped by the (job role, cost rate, bill rate) in force on each log\'s day, by first_day'),
});

const warning = z.object({
  code: z.enum(['MISSING_COST_RATE', 'MISSING_BILL_RATE']),
  team_member_id: id(),
  name: z.string(),
});

export const breakdownResponse = z.object({
  task: taskSummary,
  grouped_members: z.array(
    z.object({
      jobRole: z.string().describe('Job role name, "Unassigned" for members without one'),
      estimated_hours: hours('Sum over the group'),
      logged_hours: hours('Sum over the group'),
      estimated_cost: money('Sum over the group'),
      actual_cost: money('Sum over the group'),
      estimated_revenue: money('Sum over the group'),
      actual_revenue: money('Sum over the group'),
      members: z.array(memberFigures),
    }),
  ),
  members: z.array(memberFigures.extend({ job_title_name: z.string() })),
  warnings: z
    .array(warning)
    .describe('Members whose cost rate (or, on a billable task of a project with a bill rate, bill rate) resolves to none on a day that counts'),
});

const listSums = figureFields(FIGURES, 'Sum');

export const projectTasksResponse = z.object({
  project: z.object({
    id: id(),
    name: z.string(),
    currency: z.string(),
    budget: money('Budget').nullable(),
    rate_unit: z.enum(['hour', 'day']).describe('Whether the project\'s rates are per hour or per day'),
    hours_per_day: hours('Hours of a day, for rates per day'),
  }),
  tasks: z.array(
    taskSummary.extend({
      parent_task_id: id().nullable(),
      sub_tasks_count: z.number().int().describe('Direct children listed under the same filter'),
      ...figureFields(FIGURES.filter((figure) => !figure.summary)),
      status: z.string().nullable(),
      priority: z.string().nullable(),
      phase: z.string().nullable(),
      assignees: z.array(
        z.object({
          team_member_id: id(),
          name: z.string(),
          avatar_url: z.string().nullable(),
          job_title_name: z.string(),
          hourly_rate: shownRate('Cost rate resolved today'),
        }),
      ),
    }),
  ),
  totals: z.object(listSums),
  groups: z.array(z.object({ group_name: z.string(), task_ids: z.array(id()), ...listSums })).optional(),
});

export const fixedCostHistoryResponse = z.array(
  z.object({
    id: id(),
    old_value: money('Fixed cost before'),
    new_value: money('Fixed cost after'),
    finance_version: z.number().int().describe('The task\'s finance version after the change (its ETag)'),
    changed_by: z.string().describe('Name of the token that made the change'),
    changed_by_token_id: id().nullable(),
    changed_at: timestamp(),
  }),
);
