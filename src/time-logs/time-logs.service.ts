import type { Knex } from 'knex';
import { fieldError, notFound } from '../http/errors';
import type { PageRequest } from '../http/paging';
import { nowIso } from '../clock';
import { hoursFromSeconds, secondsFromHours } from '../finance/rules/money';
import { recordEvent } from '../events/events.repository';
import { timeLogEvent } from '../events/event-data';
import { lockProjectForWrite } from '../projects/projects.service';
import { lockProject } from '../finance/read-model/freshness';
import { hasBudget } from '../finance/read-model/budget-watch';
import { requireTask } from '../tasks/tasks.service';
import * as repo from './time-logs.repository';
import type { CreateTimeLogBody } from './time-logs.schemas';

function presentTimeLog(row: repo.TimeLogRow) {
  return { ...row, hours: hoursFromSeconds(row.seconds) };
}

/** Hours are stored as whole seconds, rounded to the nearest second. */
const secondsOf = (body: CreateTimeLogBody): number => body.seconds ?? secondsFromHours(body.hours ?? 0);

/**
 * Tasks of budgeted projects (team and task: their project), as this instance last found them: a hint
 * that spares their logs the statement that would find the budget and write nothing. Only a hint:
 * the transaction's lock decides (a project whose budget went is evaluated by nobody, and forgotten
 * here), and a task never changes project. Bounded: forgotten all at once when full.
 */
const budgetedTasks = new Map<string, string>();
const HINTS = 10_000;

function rememberBudgeted(key: string, projectId: string | undefined): void {
  if (projectId === undefined) {
    budgetedTasks.delete(key);
    return;
  }
  if (budgetedTasks.size >= HINTS) budgetedTasks.clear();
  budgetedTasks.set(key, projectId);
}

export async function createTimeLog(db: Knex, teamId: string, taskId: string, body: CreateTimeLogBody) {
  const entry = {
    task_id: taskId,
    team_member_id: body.team_member_id.toLowerCase(),
    seconds: secondsOf(body),
    // Now by the service's clock (never the database server's), like every "today".
    logged_at: body.logged_at ?? nowIso(),
    note: body.note ?? null,
  };
  const key = `${teamId}|${taskId}`;
  const hinted = budgetedTasks.get(key);
  // The log and its event are written by one statement, so they commit together (events/events.repository.ts).
  let logged = hinted ? { taskFound: true, projectId: hinted, budgeted: true, log: undefined } : await repo.logTime(db, teamId, entry);
  if (logged.budgeted && logged.projectId) {
    // Not written: the project has a budget, whose thresholds are evaluated in the log's own transaction
    // (finance/read-model/budget-watch.ts). Its locks first, in the lock order every write keeps (the
    // project's row, then its budget lock, then the rows written), then the log.
    const projectId = logged.projectId;
    logged = await db.transaction(async (trx) => {
      const project = await lockProject(trx, teamId, projectId, { kind: 'task-figures', taskIds: [taskId] });
      rememberBudgeted(key, project && hasBudget(project) ? projectId : undefined);
      return repo.logTime(trx, teamId, entry, true);
    });
  }
  const { taskFound, log } = logged;
  if (!taskFound) throw notFound('TASK_NOT_FOUND', 'Task');
  if (!log) throw fieldError('team_member_id', 'is not a member of this team');
  return presentTimeLog(log);
}

export async function listTimeLogs(db: Knex, teamId: string, taskId: string, page: PageRequest) {
  await requireTask(db, teamId, taskId);
  const { rows, next } = await repo.listTimeLogs(db, teamId, taskId, page);
  return { rows: rows.map(presentTimeLog), next };
}

export async function deleteTimeLog(db: Knex, teamId: string, id: string) {
  const row = await db.transaction(async (trx) => {
    const log = await repo.findTimeLog(trx, teamId, id);
    if (!log) return undefined;
    // Logs of archived tasks may go too (an archived task's mark is harmless).
    const projectId = await repo.projectOfTask(trx, teamId, log.task_id);
    await lockProjectForWrite(trx, teamId, projectId, { kind: 'task-figures', taskIds: [log.task_id] });
    const deleted = await repo.deleteTimeLog(trx, teamId, id);
    if (deleted) await recordEvent(trx, teamId, 'time_log.deleted', timeLogEvent(deleted, projectId));
    return deleted;
  });
  if (!row) throw notFound('TIME_LOG_NOT_FOUND', 'Time log');
  return presentTimeLog(row);
}
