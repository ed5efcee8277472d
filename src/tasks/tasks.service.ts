import type { Knex } from 'knex';
import type { Actor } from '../auth/roles';
import { Decimal, toDecimal } from '../finance/rules/money';
import { AppError, fieldError, notFound, validationError } from '../http/errors';
import { checkAmountDecimals } from '../http/validate';
import { fixedCostEvent, taskArchivedEvent, taskChangedEvent } from '../events/event-data';
import { recordEvent } from '../events/events.repository';
import { lockProjectForWrite } from '../projects/projects.service';
import { lockProjectOfTask } from '../finance/read-model/freshness';
import * as repo from './tasks.repository';
import type { CreateTaskBody, UpdateTaskBody } from './tasks.schemas';
import { writeTransaction } from '../finance/read-model/budget-watch';

export function presentTask(row: repo.TaskRow, assigneeIds: string[]) {
  return {
    id: row.id,
    project_id: row.project_id,
    parent_task_id: row.parent_task_id,
    name: row.name,
    estimated_hours: toDecimal(row.estimated_hours),
    billable: row.billable,
    fixed_cost: toDecimal(row.fixed_cost),
    currency: row.currency,
    status: row.status,
    priority: row.priority,
    phase: row.phase,
    assignee_ids: assigneeIds,
    finance_version: row.finance_version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A non-archived task of the team, or 404 TASK_NOT_FOUND. */
export async function requireTask(db: Knex, teamId: string, id: string, lock = false): Promise<repo.TaskRow> {
  const task = await repo.findTask(db, teamId, id, lock);
  if (!task) throw notFound('TASK_NOT_FOUND', 'Task');
  return task;
}

/**
 * Takes the locks a write to a task needs, in the order every write takes them: its project's row
 * (finance/read-model/freshness.ts's lockProject, which also marks the task, and its parent unless only the task's
 * own figures change, out of date), then the task's row. `ownFiguresOnly`: the write changes only the
 * task's own figures (a fixed cost; a time log takes the same lock in its own statement), so the project's
 * row is taken shared. 404 for an unknown or archived task.
 */
export async function lockTaskForWrite(trx: Knex, teamId: string, id: string, ownFiguresOnly = false) {
  const project = ownFiguresOnly ? await lockProjectOfTaskForWrite(trx, teamId, id) : await lockTreeForWrite(trx, teamId, id);
  const task = await requireTask(trx, teamId, id, true);
  return { project, task };
}

/** The project's lock, shared, for a write to the task's own figures (freshness.ts's lockProjectOfTask), or 404. */
export async function lockProjectOfTaskForWrite(trx: Knex, teamId: string, id: string) {
  const project = await lockProjectOfTask(trx, teamId, id);
  if (!project) throw notFound('TASK_NOT_FOUND', 'Task');
  return project;
}

async function lockTreeForWrite(trx: Knex, teamId: string, id: string) {
  const probe = await requireTask(trx, teamId, id);
  return lockProjectForWrite(trx, teamId, probe.project_id, { kind: 'tasks', taskIds: [id] });
}

export async function getTask(db: Knex, teamId: string, id: string) {
  const task = await requireTask(db, teamId, id);
  return presentTask(task, await repo.assigneeIds(db, teamId, id));
}

async function checkParent(trx: Knex, teamId: string, projectId: string, parentId: string): Promise<void> {
  const parent = await repo.findTask(trx, teamId, parentId);
  if (!parent || parent.project_id !== projectId) {
    throw fieldError('parent_task_id', 'is not a task of this project');
  }
}

async function checkAssignees(trx: Knex, teamId: string, projectId: string, ids: readonly string[]): Promise<void> {
  const members = await repo.projectMemberIds(trx, teamId, projectId, ids);
  const strangers = ids.flatMap((id, index) =>
    members.has(id) ? [] : [{ path: `assignee_ids.${index}`, message: 'is not a member of the task\'s project' }],
  );
  if (strangers.length) throw validationError('Assignees must be members of the task\'s project', strangers);
}

const hoursText = (value: number | undefined) => (value === undefined ? undefined : toDecimal(value).toFixed());

/** Writes a new fixed cost and its history entry; the caller holds the task row lock. */
export async function recordFixedCost(trx: Knex, actor: Actor, task: repo.TaskRow, newValue: Decimal): Promise<void> {
  const version = await repo.updateFixedCost(trx, actor.teamId, task.id, newValue.toFixed(), task.finance_version);
  if (version === undefined) throw new AppError(412, 'PRECONDITION_FAILED', 'The task changed meanwhile; reload it and retry');
  await repo.insertFixedCostChange(trx, actor.teamId, {
    task_id: task.id,
    old_value: task.fixed_cost,
    new_value: newValue.toFixed(),
    finance_version: version,
    changed_by: actor.tokenName,
    changed_by_token_id: actor.tokenId,
  });
  await recordEvent(trx, actor.teamId, 'task.fixed_cost.changed', fixedCostEvent(task, task.fixed_cost, newValue.toFixed(), actor.tokenName));
}

export async function createTask(db: Knex, actor: Actor, projectId: string, body: CreateTaskBody) {
  const teamId = actor.teamId;
  return writeTransaction(db, async (trx) => {
    // The project's lock bumps its revision; the insert marks the new task (the database does, for any
    // insert: migration 009's trigger), so the next refresh computes it with its ancestors' roll-ups.
    const project = await lockProjectForWrite(trx, teamId, projectId, { kind: 'none' });
    if (body.fixed_cost !== undefined) checkAmountDecimals('fixed_cost', body.fixed_cost, project.currency);
    if (body.parent_task_id) await checkParent(trx, teamId, projectId, body.parent_task_id.toLowerCase());
    const assignees = (body.assignee_ids ?? []).map((id) => id.toLowerCase());
    await checkAssignees(trx, teamId, projectId, assignees);
    const id = await repo.insertTask(trx, teamId, projectId, {
      name: body.name,
      estimated_hours: hoursText(body.estimated_hours),
      billable: body.billable,
      parent_task_id: body.parent_task_id?.toLowerCase() ?? null,
      status: body.status ?? null,
      priority: body.priority ?? null,
      phase: body.phase ?? null,
    });
    await repo.replaceAssignees(trx, teamId, id, assignees);
    if (body.fixed_cost) await recordFixedCost(trx, actor, await requireTask(trx, teamId, id, true), toDecimal(body.fixed_cost));
    const created = presentTask(await requireTask(trx, teamId, id), await repo.assigneeIds(trx, teamId, id));
    await recordEvent(trx, teamId, 'task.changed', taskChangedEvent(undefined, created));
    return created;
  });
}

export async function updateTask(db: Knex, actor: Actor, id: string, body: UpdateTaskBody) {
  const teamId = actor.teamId;
  return writeTransaction(db, async (trx) => {
    const { task } = await lockTaskForWrite(trx, teamId, id);
    const before = presentTask(task, await repo.assigneeIds(trx, teamId, id));
    if (body.fixed_cost !== undefined) checkAmountDecimals('fixed_cost', body.fixed_cost, task.currency);
    const parentId = body.parent_task_id?.toLowerCase();
    if (parentId) {
      await checkParent(trx, teamId, task.project_id, parentId);
      if (await repo.isSelfOrDescendant(trx, teamId, id, parentId)) {
        throw fieldError('parent_task_id', 'would make the task its own ancestor');
      }
    }
    if (body.assignee_ids !== undefined) {
      const assignees = body.assignee_ids.map((memberId) => memberId.toLowerCase());
      await checkAssignees(trx, teamId, task.project_id, assignees);
      await repo.replaceAssignees(trx, teamId, id, assignees);
    }
    await repo.updateTask(trx, teamId, id, {
      name: body.name,
      estimated_hours: hoursText(body.estimated_hours),
      billable: body.billable,
      parent_task_id: body.parent_task_id === undefined ? undefined : (parentId ?? null),
      status: body.status,
      priority: body.priority,
      phase: body.phase,
    });
    if (body.fixed_cost !== undefined && !toDecimal(body.fixed_cost).equals(toDecimal(task.fixed_cost))) {
      await recordFixedCost(trx, actor, task, toDecimal(body.fixed_cost));
    }
    const after = presentTask(await requireTask(trx, teamId, id), await repo.assigneeIds(trx, teamId, id));
    await recordEvent(trx, teamId, 'task.changed', taskChangedEvent(before, after));
    return after;
  });
}

export async function archiveTask(db: Knex, teamId: string, id: string) {
  return writeTransaction(db, async (trx) => {
    const { task } = await lockTaskForWrite(trx, teamId, id);
    const archived = await repo.archiveSubtree(trx, teamId, id);
    await recordEvent(trx, teamId, 'task.changed', taskArchivedEvent(task, archived));
    return { id, archived: true, archived_tasks: archived };
  });
}
