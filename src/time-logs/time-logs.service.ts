import type { Knex } from 'knex';
import { fieldError, notFound } from '../http/errors';
import type { PageRequest } from '../http/paging';
import { nowIso } from '../clock';
import { hoursFromSeconds, secondsFromHours } from '../finance/rules/money';
import { recordEvent } from '../events/events.repository';
import { timeLogEvent } from '../events/event-data';
import { lockProjectForWrite } from '../projects/projects.service';
import { settleAfterWrite, writeTransaction } from '../finance/read-model/budget-watch';
import { requireTask } from '../tasks/tasks.service';
import * as repo from './time-logs.repository';
import type { CreateTimeLogBody } from './time-logs.schemas';

function presentTimeLog(row: repo.TimeLogRow) {
  return { ...row, hours: hoursFromSeconds(row.seconds) };
}

/** Hours are stored as whole seconds, rounded to the nearest second. */
const secondsOf = (body: CreateTimeLogBody): number => body.seconds ?? secondsFromHours(body.hours ?? 0);

export async function createTimeLog(db: Knex, teamId: string, taskId: string, body: CreateTimeLogBody) {
  const entry = {
    task_id: taskId,
    team_member_id: body.team_member_id.toLowerCase(),
    seconds: secondsOf(body),
    // Now by the service's clock (never the database server's), like every "today".
    logged_at: body.logged_at ?? nowIso(),
    note: body.note ?? null,
  };
  // The log, its event and (on a budgeted project) its budget's pending mark are written by one
  // statement, so they commit together (events/events.repository.ts); the budget is settled after,
  // unless the log cannot reach a threshold (its mark then waits for the next settle).
  const { taskFound, log, settle, projectId } = await repo.logTime(db, teamId, entry);
  if (log && settle && projectId) await settleAfterWrite(db, new Map([[projectId, { teamId, own: [settle] }]]));
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
  const row = await writeTransaction(db, async (trx) => {
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
