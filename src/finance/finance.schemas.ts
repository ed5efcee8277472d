import { z } from 'zod';
import { uuid } from '../http/validate';
import { fixedCost } from '../tasks/tasks.schemas';

export const breakdownQuery = z
  .object({ include_subtasks: z.enum(['true', 'false']).default('false').transform((v) => v === 'true') })
  .strict();

export const BILLABLE_FILTERS = ['all', 'billable', 'non-billable'] as const;
export const GROUP_BY = ['status', 'priority', 'phase'] as const;

export const projectTasksQuery = z
  .object({
    parent_task_id: uuid().optional(),
    billable_filter: z.enum(BILLABLE_FILTERS).default('all'),
    group_by: z.enum(GROUP_BY).optional(),
  })
  .strict();

export const fixedCostBody = z.object({ fixed_cost: fixedCost() }).strict();

export type ProjectTasksQuery = z.infer<typeof projectTasksQuery>;
