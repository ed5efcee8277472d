import type { Knex } from 'knex';
import { preparedRaw } from '../db/prepared';
import { nowIso } from '../clock';
import { eventCtes } from '../events/events.repository';
import { ListOrder, Page, PageRequest, pagedQuery, takePage } from '../http/paging';
import { markLockedTask, projectOfTaskShared } from '../finance/read-model/freshness';
import { budgetedSql } from '../finance/read-model/budget-watch';

export type TimeLogRow = {
  id: string;
  task_id: string;
  team_member_id: string;
  seconds: number;
  logged_at: Date;
  note: string | null;
  created_at: Date;
};

const COLUMNS = ['id', 'task_id', 'team_member_id', 'seconds', 'logged_at', 'note', 'created_at'];

/** SQL: the day of a time_logs row `l` in the time zone of its project `p` (docs/finance-rules.md R16.1). */
const LOG_DAY = '(l.logged_at at time zone p.time_zone)::date';

/**
 * Takes a deleted log's seconds off the running totals (which its insert created), the daily one of
 * `day`: the member's total row first, then the day's, the order logTime's statement takes them in, so
 * a log added and one deleted at once on the same task and member never deadlock.
 */
async function subtractFromMemberTotal(db: Knex, teamId: string, log: TimeLogRow, day: string) {
  await db('task_member_time')
    .where({ team_id: teamId, task_id: log.task_id, team_member_id: log.team_member_id })
    .update({ total_seconds: db.raw('total_seconds - ?', [log.seconds]), log_count: db.raw('log_count - 1') });
  await db.raw(
    `update task_member_day_time set total_seconds = total_seconds - :seconds, log_count = log_count - 1
     where team_id = :teamId and task_id = :taskId and team_member_id = :memberId and day = cast(:day as date)`,
    { teamId, taskId: log.task_id, memberId: log.team_member_id, seconds: log.seconds, day },
  );
}

/**
 * What logging time found: the task's project (none: no such task, or archived), whether that project
 * has a budget (then the log's budget is pending, to settle), and the log written (none: not a member
 * of the team).
 */
export type LoggedTime = {
  taskFound: boolean;
  projectId: string | undefined;
  budgeted: boolean;
  /** The log's budget pending row, when it must be settled before the log answers (budget-watch.ts). */
  settle: string | undefined;
  log: TimeLogRow | undefined;
};

/**
 * SQL: time_log.created's data (events/event-data.ts, timeLogEvent) of the row `log` in project
 * `locked`, built in the statement that writes the log; `logged_at` as JavaScript writes a Date.
 */
const TIME_LOG_CREATED_DATA = `jsonb_build_object('time_log_id', log.id, 'project_id', locked.id, 'task_id', log.task_id,
       'team_member_id', log.team_member_id, 'seconds', log.seconds,
       'logged_at', to_char(log.logged_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * SQL, a CTE's body: whether the log's settle may wait (`wait`; docs/finance-rules.md R28.5), its
 * pending row then holding its upper bound (else none, so the row is settled at once, by the log or,
 * if it stops first, by the background drain): the project's basis is of the
 * current period and day (the key budget-watch.ts's basisKey makes), every pending row has an upper
 * bound (none is a whole recomputation or another write's), and the bounds of the pending rows and
 * of this log together stay below each budget's headroom (null: no threshold left to reach, and
 * nothing summed). A log only adds to spent, so it cannot then reach a threshold; its row waits for
 * the next settle.
 */
const WAITING = (column: string) =>
  `(select coalesce(sum(bp.${column}), 0) from budget_pending bp where bp.team_id = :teamId and bp.project_id = watch.project_id)`;
const BUDGET_SKIP = `select watch.basis_key = (case when locked.budget_period = 'month'
             then to_char(cast(:now as timestamptz) at time zone locked.time_zone, 'YYYY-MM') else 'total' end)
           || ' ' || to_char(cast(:now as timestamptz) at time zone locked.time_zone, 'YYYY-MM-DD')
         and not exists (select 1 from budget_pending bp where bp.team_id = :teamId and bp.project_id = watch.project_id and bp.upper_money is null)
         and case when watch.headroom_money is null then true else watch.headroom_money > bound.money + ${WAITING('upper_money')} end
         and case when watch.headroom_hours is null then true else watch.headroom_hours > bound.hours + ${WAITING('upper_hours')} end as wait
       from watch, bound, locked`;

/**
 * Logs time on a task, in one statement (so one round trip, atomic without a transaction of its own):
 * takes the task's project row shared (the lock every write to a project's finance inputs takes,
 * here shared because a log changes only its task's own figures), marks the task's figures out of
 * date under the revision read with that lock (finance/read-model/freshness.ts), inserts the log by a member of
 * the team, and adds its seconds to the running totals of its task and member, overall and on the
 * log's day in the project's time zone. The lock is taken before anything is written: every insert
 * reads the locked row. Nothing is written when the task or the member is not found. On a project
 * with a budget the statement also marks the budget pending for the task (budget-watch.ts's
 * markBudget) and tells the caller to settle it once committed, unless the log cannot reach a
 * threshold (BUDGET_SKIP above).
 */
export async function logTime(
  db: Knex,
  teamId: string,
  log: { task_id: string; team_member_id: string; seconds: number; logged_at: string; note: string | null },
): Promise<LoggedTime> {
  const result = await preparedRaw<TimeLogRow & { task_found: boolean; project_id: string | null; budgeted: boolean }>(
    db,
    'log_time',
    `with found as (${projectOfTaskShared(['id', 'revision', 'time_zone', 'budget', 'hours_budget', 'budget_alerts', 'budget_period'])}),
     locked as (select id, revision, time_zone, budget_period, ${budgetedSql('found')} as budgeted from found),
     member as (select id from team_members where team_id = :teamId and id = :memberId),
     marked as (${markLockedTask('locked, member')}),
     log as (
       insert into time_logs (team_id, task_id, team_member_id, seconds, logged_at, note)
       select :teamId, :taskId, member.id, :seconds, cast(:loggedAt as timestamptz), :note from locked, member
       returning ${COLUMNS.join(', ')}
     ),
     total as (
       insert into task_member_time as tmt (team_id, project_id, task_id, team_member_id, total_seconds, log_count)
       select :teamId, locked.id, log.task_id, log.team_member_id, log.seconds, 1 from log, locked
       on conflict (team_id, task_id, team_member_id) do update
         set total_seconds = tmt.total_seconds + excluded.total_seconds, log_count = tmt.log_count + 1
       returning 1
     ),
     daily as (
       insert into task_member_day_time as d (team_id, project_id, task_id, team_member_id, day, total_seconds, log_count)
       select :teamId, locked.id, log.task_id, log.team_member_id, (log.logged_at at time zone locked.time_zone)::date, log.seconds, 1
       -- After \`total\` (read here for that): the member's total row, then its day's, in the order a deleted
       -- log's transaction takes them (subtractFromMemberTotal). Unread, PostgreSQL may run the later CTE first.
       from log, locked, total
       on conflict (team_id, task_id, team_member_id, day) do update
         set total_seconds = d.total_seconds + excluded.total_seconds, log_count = d.log_count + 1
       returning 1
     ),
     watch as (
       select w.* from budget_watches w, locked where w.team_id = :teamId and w.project_id = locked.id and locked.budgeted
     ),
     bound as (select (cast(:seconds as numeric) / 3600 + 0.01) * watch.max_rate + 1 as money, cast(:seconds as numeric) / 3600 + 0.01 as hours from watch),
     decision as (${BUDGET_SKIP}),
     pending as (
       insert into budget_pending (team_id, project_id, task_ids, upper_money, upper_hours, marked_at)
       select :teamId, locked.id, array[log.task_id], case when decision.wait then bound.money end, case when decision.wait then bound.hours end,
         cast(:now as timestamptz)
       from log cross join locked left join bound on true left join decision on true where locked.budgeted
       returning id, upper_money
     ),
     ${eventCtes('log, locked', TIME_LOG_CREATED_DATA)}
     select exists (select 1 from found) as task_found, (select id from found) as project_id,
       coalesce((select budgeted from locked), false) as budgeted,
       (select pending.id::text from pending where pending.upper_money is null) as settle, log.*
     from (select 1) one left join log on true`,
    {
      teamId,
      type: 'time_log.created',
      now: nowIso(),
      taskId: log.task_id,
      memberId: log.team_member_id,
      seconds: log.seconds,
      loggedAt: log.logged_at,
      note: log.note,
    },
  );
  const { task_found: taskFound, project_id: projectId, budgeted: hasBudget, settle, ...row } = result.rows[0] as TimeLogRow & {
    task_found: boolean;
    project_id: string | null;
    budgeted: boolean;
    settle: string | null;
  };
  return { taskFound, projectId: projectId ?? undefined, budgeted: hasBudget, settle: settle ?? undefined, log: row.id ? row : undefined };
}

export async function findTimeLog(db: Knex, teamId: string, id: string): Promise<TimeLogRow | undefined> {
  return db('time_logs').where({ team_id: teamId, id }).first(COLUMNS);
}

export async function deleteTimeLog(db: Knex, teamId: string, id: string): Promise<TimeLogRow | undefined> {
  const found = await db.raw(
    `select ${LOG_DAY}::text as day from time_logs l
     join tasks t on t.team_id = l.team_id and t.id = l.task_id
     join projects p on p.team_id = t.team_id and p.id = t.project_id
     where l.team_id = :teamId and l.id = :id`,
    { teamId, id },
  );
  const [row]: TimeLogRow[] = await db('time_logs').where({ team_id: teamId, id }).delete().returning(COLUMNS);
  if (row) await subtractFromMemberTotal(db, teamId, row, found.rows[0].day);
  return row;
}

/** A task's time logs' order: newest logged_at first, then id (index time_logs_task_order_idx). */
export const TIME_LOGS_ORDER: ListOrder = {
  list: 'time-logs',
  keys: [
    { sql: 'logged_at', type: 'timestamptz', descending: true },
    { sql: 'id', type: 'uuid' },
  ],
};

export async function listTimeLogs(db: Knex, teamId: string, taskId: string, page: PageRequest): Promise<Page<TimeLogRow>> {
  const rows = await pagedQuery(db, db('time_logs').where({ team_id: teamId, task_id: taskId }).select(COLUMNS), TIME_LOGS_ORDER, page);
  return takePage(rows, TIME_LOGS_ORDER, page);
}

/** The project of a task, archived or not (tasks never move between projects). */
export async function projectOfTask(db: Knex, teamId: string, taskId: string): Promise<string> {
  const row: { project_id: string } = await db('tasks').where({ team_id: teamId, id: taskId }).first('project_id');
  return row.project_id;
}
