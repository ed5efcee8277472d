import { z } from 'zod';
import { FIRST_LOG_DAY, checkDateRange, isoDate, uuid } from '../../http/validate';
import { fixedCost } from '../../tasks/tasks.schemas';
import { id, timestamp } from '../../openapi/common';
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

const costLine = z.object({
  job_role: z.string().describe('The member\'s job role on the line\'s days, "Unassigned" without one'),
  hourly_rate: money('That role\'s rate on those days (0 without one)'),
  logged_hours: hours('The line\'s logged seconds / 3600'),
  actual_cost: money('logged_hours x hourly_rate'),
  first_day: day('Day of the line\'s first time log'),
  last_day: day('Day of the line\'s last time log'),
});

const memberFigures = z.object({
  team_member_id: id(),
  name: z.string(),
  avatar_url: z.string().nullable(),
  hourly_rate: money('Rate of the member\'s job role in the project today (0 without one)'),
  estimated_hours: hours('Share of the estimate'),
  logged_hours: hours('Sum of the cost lines\' logged hours'),
  estimated_cost: money('estimated_hours x today\'s hourly_rate'),
  actual_cost: money('Sum of the cost lines\' actual costs'),
  cost_lines: z
    .array(costLine)
    .describe('The member\'s logged time grouped by the (job role, rate) in force on each log\'s day, by first_day'),
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
      members: z.array(memberFigures),
    }),
  ),
  members: z.array(memberFigures.extend({ job_title_name: z.string() })),
});

const listSums = figureFields(FIGURES, 'Sum');

export const projectTasksResponse = z.object({
  project: z.object({ id: id(), name: z.string(), currency: z.string(), budget: money('Budget').nullable() }),
  tasks: z.array(
    taskSummary.extend({
      parent_task_id: id().nullable(),
      sub_tasks_count: z.number().int().describe('Direct children listed under the same filter'),
      ...figureFields(FIGURES.filter((figure) => !figure.summary)),
      status: z.string().nullable(),
      priority: z.string().nullable(),
      phase: z.string().nullable(),
      assignees: z.array(
        z.object({ team_member_id: id(), name: z.string(), avatar_url: z.string().nullable(), job_title_name: z.string(), hourly_rate: money('Rate') }),
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
