import { z } from 'zod';
import { MAX_AMOUNT } from '../projects/projects.schemas';
import { decimalNumber, name, uuid } from '../http/validate';
import { exactDecimal, id, timestamp } from '../openapi/common';

export const MAX_ESTIMATED_HOURS = 1_000_000;

const label = () => name(100).nullable().optional();

export const estimatedHours = () => decimalNumber({ min: 0, max: MAX_ESTIMATED_HOURS, decimals: 2 });
// Decimals are checked against the project's currency by the service.
export const fixedCost = () => decimalNumber({ min: 0, max: MAX_AMOUNT });

const assigneeIds = z
  .array(uuid())
  .max(500, 'must have at most 500 entries')
  .refine((ids) => new Set(ids.map((id) => id.toLowerCase())).size === ids.length, 'must not repeat a member');

const taskFields = {
  estimated_hours: estimatedHours().optional(),
  billable: z.boolean().optional(),
  fixed_cost: fixedCost().optional(),
  parent_task_id: uuid().nullable().optional(),
  assignee_ids: assigneeIds.optional(),
  status: label(),
  priority: label(),
  phase: label(),
};

export const createTaskBody = z.object({ name: name(500), ...taskFields }).strict();
export const updateTaskBody = z.object({ name: name(500).optional(), ...taskFields }).strict();

export type CreateTaskBody = z.infer<typeof createTaskBody>;
export type UpdateTaskBody = z.infer<typeof updateTaskBody>;

export const taskResponse = z.object({
  id: id(),
  project_id: id(),
  parent_task_id: id().nullable(),
  name: z.string(),
  estimated_hours: exactDecimal('Estimate in hours'),
  billable: z.boolean(),
  fixed_cost: exactDecimal('Fixed cost in the project currency'),
  currency: z.string(),
  status: z.string().nullable(),
  priority: z.string().nullable(),
  phase: z.string().nullable(),
  assignee_ids: z.array(id()),
  finance_version: z.number().int().describe('Bumped by every fixed-cost change; the ETag of the finance routes'),
  created_at: timestamp(),
  updated_at: timestamp(),
});

export const archivedTaskResponse = z.object({
  id: id(),
  archived: z.literal(true),
  archived_tasks: z.number().int().describe('The task and its descendants archived by this call'),
});
