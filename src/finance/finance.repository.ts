import type { Knex } from 'knex';
import { turns } from '../turns';
import { CURSOR_BATCH, batchesOf, readInBatches } from '../db/cursor';
import { prepared, preparedRaw } from '../db/prepared';
import { ReadAll, batchedReads } from '../db/batched-reads';
import { isUuid } from '../http/validate';
import { nowIso, todayOf } from '../clock';
import type { ProjectRow, RateEntryRow } from '../projects/projects.repository';
import { FIGURES_CURRENT, stampBindings, stampCurrentOf, stampOf } from './figures';

/*
 * The finance queries. Each takes a scope (one task, a task and its descendants, or a whole project)
 * and answers in one round trip whatever the number of tasks, members or time logs: logged time comes
 * from the running totals in task_member_time, never from the logs themselves.
 */

export type Scope =
  | { kind: 'subtree'; projectId: string; taskId: string }
  | { kind: 'tasks'; projectId: string; taskIds: readonly string[] }
  | { kind: 'project'; projectId: string };

type Bindings = Record<string, string>;


/** A `scope (id)` CTE listing the non-archived task ids in scope. */
function scopeCte(teamId: string, scope: Scope): { sql: string; bindings: Bindings } {
  const bindings: Bindings = { teamId, projectId: scope.projectId };
  if (scope.kind === 'project') {
    return {
      sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and archived_at is null)`,
      bindings,
    };
  }
  if (scope.kind === 'tasks') {
    // One parameter however many tasks (a refresh may name thousands).
    bindings.taskIds = scope.taskIds.join(',');
    return {
      sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId
          and id = any(string_to_array(:taskIds, ',')::uuid[]) and archived_at is null)`,
      bindings,
    };
  }
  bindings.taskId = scope.taskId;
  return {
    sql: `scope (id) as (
        select id from tasks where team_id = :teamId and project_id = :projectId and id = :taskId and archived_at is null
        union
        select t.id from tasks t join scope s on t.team_id = :teamId and t.parent_task_id = s.id
        where t.archived_at is null)`,
    bindings,
  };
}

/** From how many tasks a read of theirs goes through a cursor (tests make it small, to go through many batches). */
export const readSettings = { batchedFrom: CURSOR_BATCH };

/** Whether a read of `count` tasks' rows goes through a cursor (readRows). */
const manyTasks = (count: number) => count > readSettings.batchedFrom;

/**
 * A statement's rows: in batches through a cursor when they can be many (`many`: thousands of tasks'
 * rows, which the driver would otherwise parse in one stretch of the event loop), else in one answer.
 */
async function readRows<T>(db: Knex, sql: string, bindings: Readonly<Record<string, unknown>>, many: boolean): Promise<T[]> {
  if (many) return readInBatches<T>(db, sql, bindings);
  return ((await db.raw(sql, bindings as Record<string, string>)) as { rows: T[] }).rows;
}

/** Each scope's statement runs as a named statement. */
function named(statement: Knex.Raw, scope: Scope, name: string): Knex.Raw {
  return prepared(statement, `${name}_${scope.kind}`);
}

/** Row shape: one task in scope. */
export type FinanceTaskRow = {
  id: string;
  name: string;
  project_id: string;
  parent_task_id: string | null;
  billable: boolean;
  estimated_hours: string;
  fixed_cost: string;
  status: string | null;
  priority: string | null;
  phase: string | null;
  created_at: Date;
};

export async function tasksInScope(db: Knex, teamId: string, scope: Scope): Promise<FinanceTaskRow[]> {
  const cte = scopeCte(teamId, scope);
  const sql = `with recursive ${cte.sql}
     select t.id, t.name, t.project_id, t.parent_task_id, t.billable, t.estimated_hours, t.fixed_cost,
            t.status, t.priority, t.phase, t.created_at
     from tasks t join scope s on t.team_id = :teamId and t.id = s.id
     order by t.created_at, t.id`;
  // A whole project's tasks (10,000 rows of the benchmark's largest, parsed in one go: 70-90 ms of
  // the event loop) are fetched in batches; a few tasks in one answer.
  if (scope.kind === 'project' || (scope.kind === 'tasks' && manyTasks(scope.taskIds.length))) return readInBatches<FinanceTaskRow>(db, sql, cte.bindings);
  const result = await named(db.raw(sql, cte.bindings), scope, 'finance_tasks');
  return result.rows;
}

/** Row shape: one person taking part in one task in scope (assignee, logger, or both). */
export type ParticipantRow = {
  task_id: string;
  team_member_id: string;
  name: string;
  avatar_url: string | null;
  is_assignee: boolean;
  /** Whether the member ever logged time on the task (whatever the range). */
  has_logged_time: boolean;
  /** The member's role in the project today, and that role's rate in force today. */
  job_role: string | null;
  hourly_rate: string | null;
  /** The member's cost lines on the task in the range (section 3b rule 4), in no particular order. */
  cost_lines: readonly CostLineRow[];
};

/** One cost line of a ParticipantRow: the rate as exact text, the seconds a whole number. */
export type CostLineRow = { job_role: string | null; hourly_rate: string; seconds: number; first_day: string; last_day: string };

/** Log days counted: a closed range of dates (YYYY-MM-DD), each end optional. */
export type DayRange = { from?: string; to?: string };

/**
 * Rows of participantsInScope's statement, told apart by `kind`: 0 a participant of a task (a, b: is
 * assignee, has logged time), 1 a member taking part (name, avatar, today's role and rate), 2 a cost
 * line of a participant (role, rate, seconds, first and last day).
 */
type ParticipantPart = {
  kind: 0 | 1 | 2;
  task_id: string | null;
  team_member_id: string;
  a: boolean | null;
  b: boolean | null;
  name: string | null;
  avatar_url: string | null;
  job_role: string | null;
  hourly_rate: string | null;
  seconds: number | null;
  first_day: string | null;
  last_day: string | null;
};

/** SQL: rate-card entries (those `source` holds) as the days each is in force, from its day until its role's next entry's. */
const RATE_PERIODS = (source: string) => `
       select job_role_id, hourly_rate, effective_from,
              coalesce(lead(effective_from) over (partition by job_role_id order by effective_from), 'infinity'::date)
       from ${source}`;

/**
 * SQL, CTEs over :projectId: `project_today (day)`, today in its time zone at the service clock's
 * instant :now; `role_period` and `rate_period`, each dated role and rate entry as the days it is in
 * force (from its day until the next entry's). A member's first role counts from the beginning of time
 * (section 3b rule 3): its period starts at -infinity, not at its entry's 1970-01-01, since a log of
 * the first hours of 1970 (UTC) falls on 1969-12-31 in a project west of UTC. A rate has no such
 * rule: before a role's first entry it has none (rule 2: 0). The one place that says which role and
 * rate hold on a day.
 */
const DATED_PERIODS = `project_today (day) as (
       select ${todayOf('p')} from projects p where p.team_id = :teamId and p.id = :projectId
     ),
     role_period (team_member_id, job_role_id, starts, ends) as (
       select team_member_id, job_role_id,
              case when row_number() over member_entries = 1 then '-infinity'::date else effective_from end,
              coalesce(lead(effective_from) over member_entries, 'infinity'::date)
       from project_member_roles where team_id = :teamId and project_id = :projectId
       window member_entries as (partition by team_member_id order by effective_from)
     ),
     rate_period (job_role_id, hourly_rate, starts, ends) as (${RATE_PERIODS('project_rate_cards where team_id = :teamId and project_id = :projectId')})`;

/** SQL joins (over DATED_PERIODS): the role today of the member `member` (`jr`, its name) and that role's rate today (`rate`). */
const ROLE_AND_RATE_TODAY = (member: string) => `cross join project_today pt
     left join role_period role on role.team_member_id = ${member} and pt.day >= role.starts and pt.day < role.ends
     left join job_roles jr on jr.team_id = :teamId and jr.id = role.job_role_id
     left join rate_period rate on rate.job_role_id = role.job_role_id and pt.day >= rate.starts and pt.day < rate.ends`;

/**
 * SQL (over DATED_PERIODS): the cost lines (CONTRACT section 3b rule 4) of the per-day totals `d` that
 * `join` and `where` keep: each task and member's logged seconds grouped by the role on the day and
 * that role's rate on the day (0 without one), with the first and last day of each line.
 */
const COST_LINES = (join: string, where: string) => `
       select d.task_id, d.team_member_id, role.job_role_id, trim_scale(coalesce(rate.hourly_rate, 0)) as hourly_rate,
              min(d.day) as first_day, max(d.day) as last_day, sum(d.total_seconds) as seconds
       from task_member_day_time d
       ${join}
       left join role_period role on role.team_member_id = d.team_member_id and d.day >= role.starts and d.day < role.ends
       left join rate_period rate on rate.job_role_id = role.job_role_id and d.day >= rate.starts and d.day < rate.ends
       where d.total_seconds > 0 and ${where}
       group by d.task_id, d.team_member_id, role.job_role_id, trim_scale(coalesce(rate.hourly_rate, 0))`;

/**
 * The people taking part in the tasks in scope (CONTRACT section 3 rule 1), with their role and its
 * rate today (the service clock's instant :now in the project's time zone), and their cost lines
 * (section 3b rule 4): their logged seconds in the range, from the per-day running totals, grouped by
 * the role and rate in force on each day. The dated roles and rates are turned into periods once
 * (a few rows per member and role), which each day's totals join by range. One statement (one
 * snapshot) answers flat rows of three kinds: each participant, each member once (its name and today's
 * role and rate), each cost line; they are put together here, so no JSON is built or parsed per row.
 */
export async function participantsInScope(
  db: Knex,
  teamId: string,
  scope: Scope,
  now: string,
  range: DayRange = {},
): Promise<ParticipantRow[]> {
  const cte = scopeCte(teamId, scope);
  const statement = db.raw(
    `with recursive ${cte.sql},
     assigned (task_id, team_member_id) as (
       select a.task_id, a.team_member_id from task_assignees a join scope s on a.team_id = :teamId and a.task_id = s.id
     ),
     logged (task_id, team_member_id) as (
       select x.task_id, x.team_member_id from task_member_time x join scope s on x.team_id = :teamId and x.task_id = s.id
       where x.total_seconds > 0
     ),
     participant (task_id, team_member_id, is_assignee, has_logged_time) as (
       select coalesce(a.task_id, l.task_id), coalesce(a.team_member_id, l.team_member_id), a.task_id is not null, l.task_id is not null
       from assigned a full join logged l on l.task_id = a.task_id and l.team_member_id = a.team_member_id
     ),
     ${DATED_PERIODS},
     line as (${COST_LINES(
       'join scope s on d.team_id = :teamId and d.task_id = s.id',
       '(cast(:from as date) is null or d.day >= cast(:from as date)) and (cast(:to as date) is null or d.day <= cast(:to as date))',
     )})
     select 0 as kind, p.task_id, p.team_member_id, p.is_assignee as a, p.has_logged_time as b,
            null::text as name, null::text as avatar_url, null::text as job_role, null::text as hourly_rate,
            null::bigint as seconds, null::text as first_day, null::text as last_day
     from participant p
     union all
     select 1, null, m.id, null, null, m.name, m.avatar_url, jr.name, rate.hourly_rate::text, null, null, null
     from team_members m
     ${ROLE_AND_RATE_TODAY('m.id')}
     where m.team_id = :teamId and m.id in (select team_member_id from participant)
     union all
     select 2, l.task_id, l.team_member_id, null, null, null, null, jr.name, l.hourly_rate::text, l.seconds, l.first_day::text, l.last_day::text
     from line l left join job_roles jr on jr.team_id = :teamId and jr.id = l.job_role_id`,
    { ...cte.bindings, now, from: range.from ?? null, to: range.to ?? null } as Record<string, string | null>,
  );
  const result = await named(statement, scope, 'finance_participant_parts');
  return assembleParticipants(result.rows);
}

/**
 * The assignees of some tasks with their name, avatar, and role and rate today (participant rows
 * without cost lines: `has_logged_time` false, which no estimate rule reads): what costs the tasks'
 * estimates.
 */
export async function assigneesToday(db: Knex, teamId: string, projectId: string, taskIds: readonly string[], now: string): Promise<ParticipantRow[]> {
  const assignees = await readRows<Omit<ParticipantRow, 'cost_lines'> & { cost_lines?: ParticipantRow['cost_lines'] }>(
    db,
    `with ${DATED_PERIODS}
     select a.task_id, m.id as team_member_id, m.name, m.avatar_url, jr.name as job_role, rate.hourly_rate::text as hourly_rate,
            true as is_assignee, false as has_logged_time
     from task_assignees a
     join team_members m on m.team_id = a.team_id and m.id = a.team_member_id
     ${ROLE_AND_RATE_TODAY('m.id')}
     where a.team_id = :teamId and a.task_id = any(string_to_array(:taskIds, ',')::uuid[])`,
    { teamId, projectId, taskIds: taskIds.join(','), now },
    manyTasks(taskIds.length),
  );
  // Completed in place: a preview reads tens of thousands of these, and a copy each was measurable.
  for (const row of assignees) row.cost_lines = NO_COST_LINES;
  return assignees as ParticipantRow[];
}

const NO_COST_LINES: readonly CostLineRow[] = Object.freeze([]);

/** A task's logged hours and actual labor cost as stored (exact text). */
export type StoredActuals = { logged_hours: string; actual_labor_cost: string };

/** Some tasks' logged hours and actual labor cost as stored, by task (tasks without stored figures left out). */
export async function storedActuals(db: Knex, teamId: string, taskIds: readonly string[]): Promise<Map<string, StoredActuals>> {
  const actuals = await db.raw(
    `select task_id, logged_hours::text as logged_hours, actual_labor_cost::text as actual_labor_cost from task_labor
     where team_id = :teamId and task_id = any(string_to_array(:taskIds, ',')::uuid[])`,
    { teamId, taskIds: taskIds.join(',') },
  );
  return new Map((actuals.rows as (StoredActuals & { task_id: string })[]).map((row) => [row.task_id, row]));
}

/**
 * participantsInScope's rows put together: one row per participant, its member's fields and its cost
 * lines (tens of thousands of rows for a batch: in turns of the event loop).
 */
async function assembleParticipants(parts: readonly ParticipantPart[]): Promise<ParticipantRow[]> {
  const members = new Map<string, ParticipantPart>();
  // Lines by task, then member (no key strings made per row).
  const lines = new Map<string, Map<string, CostLineRow[]>>();
  const pace = turns();
  for (const part of parts) {
    if (pace.due()) await pace.take();
    if (part.kind === 1) members.set(part.team_member_id, part);
    else if (part.kind === 2) {
      const line: CostLineRow = {
        job_role: part.job_role,
        hourly_rate: part.hourly_rate as string,
        seconds: Number(part.seconds),
        first_day: part.first_day as string,
        last_day: part.last_day as string,
      };
      let ofTask = lines.get(part.task_id as string);
      if (!ofTask) lines.set(part.task_id as string, (ofTask = new Map()));
      const own = ofTask.get(part.team_member_id);
      if (own) own.push(line);
      else ofTask.set(part.team_member_id, [line]);
    }
  }
  const rows: ParticipantRow[] = [];
  for (const part of parts) {
    if (pace.due()) await pace.take();
    if (part.kind !== 0) continue;
    const member = members.get(part.team_member_id);
    if (!member) continue; // never: every participant's member is answered (assignments and logs reference it)
    rows.push({
      task_id: part.task_id as string,
      team_member_id: part.team_member_id,
      name: member.name as string,
      avatar_url: member.avatar_url,
      is_assignee: Boolean(part.a),
      has_logged_time: Boolean(part.b),
      job_role: member.job_role,
      hourly_rate: member.hourly_rate,
      cost_lines: lines.get(part.task_id as string)?.get(part.team_member_id) ?? [],
    });
  }
  return rows;
}

/**
 * A project with the version of its stored figures the list cache keys on: its revision and the
 * stamp's generation while its figures are current at `now` (figures.ts), else null (a list read now
 * brings them current first, and is not cached under an older version).
 */
export async function findListedProject(
  db: Knex,
  teamId: string,
  projectId: string,
  now: string,
): Promise<(ProjectRow & { figures_version: string | null }) | undefined> {
  const statement = db.raw(
    `select p.id, p.name, p.currency, p.budget, p.time_zone, p.created_at, p.updated_at, p.revision, p.reset_revision,
            case when ${stampCurrentOf('p')} then
              p.revision::text || '.' || (select f.generation from project_figures f where f.team_id = p.team_id and f.project_id = p.id)::text
            end as figures_version
     from projects p where p.team_id = :teamId and p.id = :projectId`,
    { teamId, projectId, ...stampBindings(now) },
  );
  const result = await prepared(statement, 'finance_listed_project');
  return result.rows[0];
}

/**
 * The unfiltered project list's totals (the sums of its top-level rows' stored roll-ups), and whether
 * the stored figures are current at `now` (figures.ts).
 */
export async function storedProjectSums(
  db: Knex,
  teamId: string,
  projectId: string,
  now: string,
): Promise<ListedFigures & { current: boolean }> {
  const sums = ROLLED_FIGURES.map(
    (figure) => `trim_scale(coalesce(sum(l.tree_billable_${figure} + l.tree_non_billable_${figure}), 0))::text as ${figure}`,
  ).join(', ');
  const result = await db.raw(
    `select ${sums}, ${FIGURES_CURRENT} as current
     from tasks t join task_labor l on l.team_id = t.team_id and l.task_id = t.id
     where t.team_id = :teamId and t.project_id = :projectId and t.parent_task_id is null and t.archived_at is null`,
    { teamId, projectId, ...stampBindings(now) },
  );
  return result.rows[0];
}

/** A task's own stored figures (exact numeric text), as the calculator computed them. */
export type StoredOwnFigures = { task_id: string } & ListedFigures;

/**
 * The own stored figures of some tasks of a project (non-archived, with stored figures), and whether
 * the project's stored figures are current at `now` (figures.ts) in the same snapshot.
 */
export async function storedOwnFigures(
  db: Knex,
  teamId: string,
  projectId: string,
  taskIds: readonly string[],
  now: string,
): Promise<{ current: boolean; rows: StoredOwnFigures[] }> {
  const rows = await readRows<StoredOwnFigures & { current: boolean }>(
    db,
    `select ${FIGURES_CURRENT} as current, own.* from (select 1) one
     left join (
       select t.id as task_id, ${ROLLED_FIGURES.map((figure) => `${ownFigure(figure)}::text as ${figure}`).join(', ')}
       from tasks t join task_labor l on l.team_id = t.team_id and l.task_id = t.id
       where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
         and t.id = any(string_to_array(:taskIds, ',')::uuid[])
     ) own on true`,
    { teamId, projectId, taskIds: taskIds.join(','), ...stampBindings(now) },
    manyTasks(taskIds.length),
  );
  return { current: Boolean(rows[0]?.current), rows: rows.filter((row) => row.task_id !== null) };
}

/**
 * Tasks an input change can change the own figures of, by what it changes: their actual cost (time
 * logged on a day whose role or rate changed) or only their estimate's cost (an assignee's name, which
 * orders the split, or its role or rate today).
 */
export type CostedTasks = { logged: string[]; assigned: string[] };

function costedTasks(rows: readonly { why: 'logged' | 'assigned'; task_id: string }[]): CostedTasks {
  const costed: CostedTasks = { logged: [], assigned: [] };
  for (const row of rows) costed[row.why].push(row.task_id);
  return costed;
}

/**
 * SQL CTEs (over DATED_PERIODS): `changed (team_member_id, starts, ends)`, the days from :from on on
 * which a member's role is one of :roles (a comma-separated list), and `changed_pair (task_id,
 * team_member_id)`, each task and member with time logged on such a day: the members' cost lines
 * that a change of those roles' rates from :from on can change.
 */
const CHANGED_PAIRS = `changed (team_member_id, starts, ends) as (
       select team_member_id, greatest(starts, cast(:from as date)), ends from role_period
       where job_role_id = any(string_to_array(:roles, ',')::uuid[]) and ends > cast(:from as date)
     ),
     changed_pair (task_id, team_member_id) as (
       select distinct d.task_id, d.team_member_id from task_member_day_time d
       join changed c on c.team_member_id = d.team_member_id and d.day >= c.starts and d.day < c.ends
       where d.team_id = :teamId and d.project_id = :projectId and d.day >= cast(:from as date) and d.total_seconds > 0
     )`;

/**
 * The tasks of a project whose own figures a change of the rates of `roles` from `from` on can change
 * (CONTRACT section 3b): those with time logged on or after that day by someone whose role on the day
 * is one of them, and, when the change takes effect by today, those whose assignees' role today is
 * one of them (their estimate is costed at today's rate).
 */
export async function tasksCostedAt(
  db: Knex,
  teamId: string,
  projectId: string,
  roles: readonly string[],
  from: string,
  now: string,
): Promise<CostedTasks> {
  if (roles.length === 0) return { logged: [], assigned: [] };
  const result = await db.raw(
    `with ${DATED_PERIODS},
     ${CHANGED_PAIRS}
     select distinct 'logged' as why, task_id from changed_pair
     union
     select 'assigned', a.task_id from task_assignees a
     join tasks t on t.team_id = a.team_id and t.id = a.task_id and t.project_id = :projectId
     cross join project_today pt
     join changed c on c.team_member_id = a.team_member_id and pt.day >= c.starts and pt.day < c.ends
     where a.team_id = :teamId`,
    { teamId, projectId, roles: roles.join(','), from, now },
  );
  return costedTasks(result.rows);
}

/**
 * Seconds a member logged on a task with one role on the days, at one rate before a change and one
 * after it (costLinesChangedAt): a part of one cost line of each card.
 */
export type ChangedLineRow = {
  task_id: string;
  team_member_id: string;
  job_role_id: string | null;
  job_role: string | null;
  hourly_rate_before: string;
  hourly_rate: string;
  seconds: number;
};

/**
 * The cost lines (CONTRACT section 3b rule 4, over all days) that a change of rates can change, under
 * two rate cards at once: the one the statement's snapshot holds (`hourly_rate`: read in a savepoint
 * that made the change, the card after it) and `before` (the entries before the change,
 * `hourly_rate_before`). Each row is the seconds a member logged on a task with one role at one rate of
 * each card: grouped by role and either rate, the lines of either card (labor.ts's linesChangeByTask).
 * In batches as they are fetched (a change can reach every line of a project), ordered by task, then
 * member.
 *
 * How, without going through every day of the project:
 * - `rate_piece`: each role's days cut where either card's rate changes, with both rates; `member_piece`:
 *   those pieces cut again by each member's role periods. A member's day lies in exactly one piece,
 *   whose role and rates are its role and rates on the day (section 3b rules 2 and 3, DATED_PERIODS).
 * - A line of one card can change only if it holds a day whose rate differs between the cards: only
 *   pieces whose role and rate (of either card) are those of such a piece of the same member are kept
 *   (`line_piece`), and only days from the first of them on are read (the per-day totals' index by
 *   project and day), joined to their piece by member and day.
 * - A line that is the same under both cards (its rows all keep their rate, and its rate's line after
 *   the change is made of the same rows) costs the same before and after, so its rows are left out:
 *   the calculator's linesChangeDelta, which subtracts the lines before and adds those after,
 *   would only cancel them.
 * The days of unchanged roles, and of a changed role's periods at rates the change leaves alone (its
 * periods before the change, unless a rate recurs), are not read; those of a member's repriced role
 * are, logged on any task, and lines that do not change are then left out. With no task logged on a
 * day the change reprices (`loggedTasks` empty: tasksCostedAt's `logged`, such as a change effective
 * after the last log), no line can change and nothing is read. On the benchmark's 10,000-task project
 * a raise of every role from 18 months back read 82,000 days here, against 125,000 copied to a
 * temporary table and costed day by day before (550 ms of statements before, 150-175 ms now;
 * BENCHMARKS.md, twelfth run).
 *
 * The days are joined to their piece by `d.day + 0`, a bound no index scan can take: the planner
 * expects a handful of pieces (there are dozens), and given the bound it read the project's days in
 * each piece's range once per piece (270 ms) instead of once in all, joined by member (165 ms).
 */
export async function* costLinesChangedAt(
  trx: Knex,
  teamId: string,
  projectId: string,
  loggedTasks: readonly string[],
  before: readonly RateEntryRow[],
  now: string,
): AsyncGenerator<ChangedLineRow[]> {
  if (loggedTasks.length === 0) return;
  const bindings = { teamId, projectId, before: JSON.stringify(before), now };
  const lines = batchesOf<ChangedLineRow & { seconds: string | number }>(
    trx,
    `with ${DATED_PERIODS},
     rate_period_before (job_role_id, hourly_rate, starts, ends) as (${RATE_PERIODS(
       'json_to_recordset(cast(:before as json)) as e (job_role_id uuid, hourly_rate numeric, effective_from date)',
     )}),
     rate_cut (job_role_id, starts) as (
       select job_role_id, starts from rate_period union select job_role_id, starts from rate_period_before
       union select job_role_id, '-infinity'::date from rate_period union select job_role_id, '-infinity'::date from rate_period_before
     ),
     rate_piece (job_role_id, starts, ends, hourly_rate, hourly_rate_before) as (
       select c.job_role_id, c.starts, coalesce(lead(c.starts) over (partition by c.job_role_id order by c.starts), 'infinity'::date),
              trim_scale(coalesce((select r.hourly_rate from rate_period r where r.job_role_id = c.job_role_id and c.starts >= r.starts and c.starts < r.ends), 0)),
              trim_scale(coalesce((select r.hourly_rate from rate_period_before r where r.job_role_id = c.job_role_id and c.starts >= r.starts and c.starts < r.ends), 0))
       from rate_cut c
     ),
     member_piece (team_member_id, job_role_id, hourly_rate, hourly_rate_before, starts, ends) as (
       select role.team_member_id, role.job_role_id, p.hourly_rate, p.hourly_rate_before, greatest(role.starts, p.starts), least(role.ends, p.ends)
       from role_period role join rate_piece p on p.job_role_id = role.job_role_id and p.starts < role.ends and p.ends > role.starts
     ),
     line_piece as (
       select p.* from member_piece p
       where exists (
         select 1 from member_piece c
         where c.team_member_id = p.team_member_id and c.job_role_id = p.job_role_id and c.hourly_rate <> c.hourly_rate_before
           and (c.hourly_rate_before = p.hourly_rate_before or c.hourly_rate = p.hourly_rate)
       )
     ),
     line as (
       select d.task_id, d.team_member_id, p.job_role_id, p.hourly_rate, p.hourly_rate_before, sum(d.total_seconds) as seconds
       from task_member_day_time d
       join line_piece p on p.team_member_id = d.team_member_id and d.day + 0 >= p.starts and d.day + 0 < p.ends
       where d.team_id = :teamId and d.project_id = :projectId and d.total_seconds > 0 and d.day >= (select min(starts) from line_piece)
       group by d.task_id, d.team_member_id, p.job_role_id, p.hourly_rate, p.hourly_rate_before
     ),
     compared as (
       select l.*,
              bool_and(l.hourly_rate = l.hourly_rate_before) over (partition by l.task_id, l.team_member_id, l.job_role_id, l.hourly_rate_before) as before_line_same,
              bool_and(l.hourly_rate = l.hourly_rate_before) over (partition by l.task_id, l.team_member_id, l.job_role_id, l.hourly_rate) as after_line_same
       from line l
     )
     select l.task_id, l.team_member_id, l.job_role_id, jr.name as job_role, l.hourly_rate_before::text as hourly_rate_before,
            l.hourly_rate::text as hourly_rate, l.seconds
     from compared l left join job_roles jr on jr.team_id = :teamId and jr.id = l.job_role_id
     where not (l.before_line_same and l.after_line_same)
     order by l.task_id, l.team_member_id`,
    bindings,
  );
  // seconds: a sum of bigints, numeric, which both drivers answer as text; made a number in place (as
  // assigneesToday completes its rows), not by a copy of each of a preview's rows.
  for await (const rows of lines) {
    for (const row of rows) row.seconds = Number(row.seconds);
    yield rows as ChangedLineRow[];
  }
}

/** A mark of a changed input that is not a task (stale_inputs): a member's role or display, or a role's rate, from a day on. */
export type InputMark = { seq: string; team_member_id: string | null; job_role_id: string | null; from_day: string };

/**
 * The tasks whose own figures a changed member input may change (one mark): those the member is
 * assigned to (its name orders the estimate split, its role today costs its share) and those it logged
 * time on from the mark's day on (the role of those days costs them). Read after the mark, so an
 * assignment or log committed since it is seen (and carries its own mark besides).
 */
async function tasksCostedForMember(db: Knex, teamId: string, projectId: string, mark: InputMark): Promise<CostedTasks> {
  // From the beginning (a member removed, or new to the project): every task it logged time on, from
  // the running totals' index by member; from a later day: the per-day totals' range from that day.
  const everyDay = mark.from_day === '-infinity' || mark.from_day <= '1970-01-01';
  const logged = everyDay
    ? `select 'logged', x.task_id from task_member_time x
       where x.team_id = :teamId and x.team_member_id = :memberId and x.project_id = :projectId and x.total_seconds > 0`
    : `select distinct 'logged', d.task_id from task_member_day_time d
       where d.team_id = :teamId and d.project_id = :projectId and d.day >= cast(:from as date)
         and d.team_member_id = :memberId and d.total_seconds > 0`;
  const result = await db.raw(
    `select 'assigned' as why, a.task_id from task_assignees a join tasks t on t.team_id = a.team_id and t.id = a.task_id
     where a.team_id = :teamId and a.team_member_id = :memberId and t.project_id = :projectId
     union all
     ${logged}`,
    { teamId, projectId, memberId: mark.team_member_id as string, from: mark.from_day },
  );
  return costedTasks(result.rows);
}

/**
 * The tasks whose own figures the changed inputs of `marks` may change (what a refresh recomputes for
 * them), by what they change: a member's (tasksCostedForMember), or the tasks a role's new rates cost
 * (tasksCostedAt).
 */
export async function tasksCostedByInputs(
  db: Knex,
  teamId: string,
  projectId: string,
  marks: readonly InputMark[],
  now: string,
): Promise<{ logged: Set<string>; assigned: Set<string> }> {
  const tasks = { logged: new Set<string>(), assigned: new Set<string>() };
  const add = (costed: CostedTasks) => {
    for (const id of costed.logged) tasks.logged.add(id);
    for (const id of costed.assigned) tasks.assigned.add(id);
  };
  const rolesFrom = new Map<string, string[]>();
  for (const mark of marks) {
    if (mark.team_member_id) add(await tasksCostedForMember(db, teamId, projectId, mark));
    else if (mark.job_role_id) rolesFrom.set(mark.from_day, [...(rolesFrom.get(mark.from_day) ?? []), mark.job_role_id]);
  }
  for (const [from, roles] of rolesFrom) add(await tasksCostedAt(db, teamId, projectId, roles, from, now));
  return tasks;
}

/**
 * Makes every stored breakdown part of the project out of date at once (finance.service's getBreakdown
 * computes a task's again at its next read): for changes that show in the parts of many tasks (a
 * member's name, avatar, role or rate today), where rewriting each took 250 ms on the benchmark's
 * largest project. Parts a refresh stores afterwards carry the new version (upsertTaskLabor).
 */
export async function bumpPartsVersion(db: Knex, teamId: string, projectId: string): Promise<void> {
  await db.raw('update project_figures set parts_version = parts_version + 1 where team_id = :teamId and project_id = :projectId', { teamId, projectId });
}

/** Row shape: a task's summary figures (exact numeric text) and its stored breakdown parts. */
export type StoredBreakdownRow = {
  id: string;
  name: string;
  project_id: string;
  billable: boolean;
  finance_version: number;
  currency: string;
  estimated_hours: string;
  logged_hours: string;
  estimated_labor_cost: string;
  actual_labor_cost: string;
  fixed_cost: string;
  /** As stored (labor.ts): read only with the parts below, which are null without a labor row. */
  total_estimated_cost: string;
  total_actual_cost: string;
  /**
   * Null until the task's figures are first stored, after a refresh that stored figures only (labor.ts),
   * and when they were computed under another version of the project's parts (bumpPartsVersion).
   */
  members_json: string | null;
  grouped_members_json: string | null;
  /** The stored labor row's version (its xmin), for storeBreakdownParts; null without a row. */
  labor_version: string | null;
  /** The project's parts version when read, for storeBreakdownParts. */
  parts_version: string;
  /** Whether this task's stored figures were current (figures.ts: the project's stamp, and no mark on the task) when read. */
  current: boolean;
  /** The service clock's instant the row was read at, whose day `current` was checked for. */
  read_at: string;
  /**
   * The breakdown's answer, encoded by the first request that answers from this row (finance.service's
   * getBreakdown): the requests that share the row share it. The big task's answer is 118 KB, and
   * encoding it once per request set off a full garbage collection every 100 ms (BENCHMARKS.md,
   * fifteenth run).
   */
  answer?: Buffer;
};

/** SQL: whether a stored labor row's (l) breakdown parts are of its project's (pf: project_figures) parts version. */
const PARTS_CURRENT = 'l.parts_version = coalesce(pf.parts_version, 0)';

/** SQL: whether a stored labor row (l) holds no breakdown parts of its project's (pf) parts version: what the filler computes. */
const PARTS_MISSING = `(l.members_json is null or not ${PARTS_CURRENT})`;

/** The task a stored breakdown is read for, and the team asking. */
export type StoredBreakdownKey = { teamId: string; taskId: string };

/**
 * The stored breakdowns of non-archived tasks, each asked for by its own team: one indexed read per
 * task, whatever its size, all in one statement. The stamp is checked for today by the service clock
 * at the read, whose instant each row carries (`read_at`).
 */
const readStoredBreakdowns: ReadAll<StoredBreakdownKey, StoredBreakdownRow> = async (db, keys) => {
  const now = nowIso();
  const result = await preparedRaw<StoredBreakdownRow & { key: string }>(
    db,
    'finance_stored_breakdowns',
    `select k.key::text as key, t.id, t.name, t.project_id, t.billable, t.finance_version, p.currency, ${stampCurrentOf('p', 't.id')} as current,
            trim_scale(t.estimated_hours) as estimated_hours,
            trim_scale(coalesce(l.logged_hours, 0)) as logged_hours,
            trim_scale(coalesce(l.estimated_labor_cost, 0)) as estimated_labor_cost,
            trim_scale(coalesce(l.actual_labor_cost, 0)) as actual_labor_cost,
            trim_scale(t.fixed_cost) as fixed_cost,
            trim_scale(l.total_estimated_cost) as total_estimated_cost,
            trim_scale(l.total_actual_cost) as total_actual_cost,
            case when ${PARTS_CURRENT} then l.members_json end as members_json,
            case when ${PARTS_CURRENT} then l.grouped_members_json end as grouped_members_json,
            l.xmin::text as labor_version, coalesce(pf.parts_version, 0)::text as parts_version
     from unnest(string_to_array(:teamIds, ',')::uuid[], string_to_array(:taskIds, ',')::uuid[]) with ordinality as k (team_id, task_id, key)
     join tasks t on t.team_id = k.team_id and t.id = k.task_id and t.archived_at is null
     join projects p on p.team_id = t.team_id and p.id = t.project_id
     left join task_labor l on l.team_id = t.team_id and l.task_id = t.id
     left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id`,
    { teamIds: keys.map((key) => key.teamId).join(','), taskIds: keys.map((key) => key.taskId).join(','), ...stampBindings(now) },
  );
  // Rows are completed in place: copying their eighteen fields cost as much as the rest of this function.
  const byKey = new Map<number, StoredBreakdownRow>();
  for (const row of result.rows) {
    row.read_at = now;
    byKey.set(Number(row.key), row);
  }
  // Ordinality counts from 1.
  return keys.map((_, i) => byKey.get(i + 1));
};

/**
 * A non-archived task's breakdown from its stored labor row, read together with the others asked for
 * in the same turn of the event loop (db/batched-reads.ts): random breakdowns under load share their
 * round trips to the database, and requests for one task in one turn share its row (read-only but for
 * its `answer`, which they share too).
 */
const readStoredBreakdown = batchedReads(readStoredBreakdowns, { identify: (key) => `${key.teamId} ${key.taskId}` });
export function storedBreakdown(db: Knex, key: StoredBreakdownKey): Promise<StoredBreakdownRow | undefined> {
  // The keys go into comma-separated lists: only UUIDs (which hold no comma) may, and no other id names a task.
  if (!isUuid(key.teamId) || !isUuid(key.taskId)) return Promise.resolve(undefined);
  return readStoredBreakdown(db, key);
}

/**
 * The eight figures of CONTRACT section 4 a task's roll-up sums, in the contract's order: each task's
 * own as stored (its estimated hours and fixed cost are the task's; the others the calculator computed,
 * labor.ts), so no rule of the calculator's is restated here.
 */
export const ROLLED_FIGURES = [
  'estimated_hours',
  'logged_hours',
  'estimated_labor_cost',
  'actual_labor_cost',
  'fixed_cost',
  'total_estimated_cost',
  'total_actual_cost',
  'variance',
] as const;

type RolledFigure = (typeof ROLLED_FIGURES)[number];

/** The figures that are inputs of the task itself (tasks), not stored with its labor (task_labor). */
const TASK_FIGURES: ReadonlySet<RolledFigure> = new Set(['estimated_hours', 'fixed_cost']);

/** A task's own figure, from the task (t) or its labor row (l). */
const ownFigure = (figure: RolledFigure) => (TASK_FIGURES.has(figure) ? `t.${figure}` : `l.${figure}`);

/** The eight summed figures of a listed task, as exact numeric text. */
export type ListedFigures = Record<RolledFigure, string>;

/** Row shape: a listed task with its rolled-up figures under the filter, as exact numeric text. */
export type ListedRow = ListedFigures & {
  id: string;
  name: string;
  parent_task_id: string | null;
  billable: boolean;
  status: string | null;
  priority: string | null;
  phase: string | null;
  sub_tasks_count: number;
};

/** A stored roll-up column under the billable_filter: one kind's, or both kinds added. */
function rolled(column: string): string {
  return `case :filter when 'billable' then l.tree_billable_${column} when 'non-billable' then l.tree_non_billable_${column}
              else l.tree_billable_${column} + l.tree_non_billable_${column} end`;
}

/**
 * The listed tasks of a project (a task is listed when it or a descendant passes the filter) with their
 * stored roll-ups under the filter (f): the children of :parentId (null: the top level), or with
 * :allLevels every listed task.
 */
const LISTED_TASKS = `from tasks t
     join task_labor l on l.team_id = t.team_id and l.project_id = t.project_id and l.task_id = t.id
     cross join lateral (
       select ${rolled('tasks')} as tasks,
              ${ROLLED_FIGURES.map((figure) => `${rolled(figure)} as ${figure}`).join(',\n              ')},
              case :filter when 'billable' then l.children_billable when 'non-billable' then l.children_non_billable
                else l.children end as sub_tasks
     ) f
     where t.team_id = :teamId and t.project_id = :projectId and t.archived_at is null
       and (cast(:allLevels as boolean) or t.parent_task_id is not distinct from cast(:parentId as uuid))
       and f.tasks > 0`;

/** The eight figures as exact numeric text columns (`figure` gives each: a stored roll-up, or a sum of them). */
function figureTexts(figure: (name: RolledFigure) => string): string {
  return ROLLED_FIGURES.map((name) => `trim_scale(${figure(name)}) as ${name}`).join(', ');
}

type ListScope = { teamId: string; projectId: string; filter: 'all' | 'billable' | 'non-billable'; parentId: string | null };

/**
 * Every listed task of a project under the filter, in creation order (what an export arranges into a
 * tree), and whether the stored figures were current for `today` (figures.ts) in the snapshot read.
 */
export async function treeRows(db: Knex, scope: Omit<ListScope, 'parentId'>, now: string): Promise<{ current: boolean; rows: ListedRow[] }> {
  // The stamp's answer comes once, as its own first row (position 0); the tasks follow in creation
  // order (no timestamps to parse: a whole project's rows are read here), fetched in batches.
  const rows = await readInBatches<ListedRow & { current: boolean | null; position: string }>(
    db,
    `select ${FIGURES_CURRENT} as current, 0 as position, null as id, null as name, null as parent_task_id, null as billable,
            null as status, null as priority, null as phase, null as sub_tasks_count,
            ${ROLLED_FIGURES.map((figure) => `null as ${figure}`).join(', ')}
     union all
     select null, row_number() over (order by t.created_at, t.id), t.id, t.name, t.parent_task_id, t.billable, t.status, t.priority, t.phase,
            f.sub_tasks, ${figureTexts((figure) => `f.${figure}`)}
       ${LISTED_TASKS}
     order by position`,
    { ...scope, parentId: null, allLevels: true, ...stampBindings(now) },
  );
  const [stamp, ...listed] = rows;
  return { current: Boolean(stamp?.current), rows: listed };
}

/** A JSON value of a nullable text column. */
const jsonText = (column: string) => `coalesce(to_json(${column})::text, 'null')`;

/**
 * A list row (CONTRACT section 4) as JSON text, in the contract's field order, rendered by PostgreSQL
 * from a task (t), its labor row (l), its eight rolled-up figures and sub-task count under a filter,
 * and its project's currency as JSON. Figures are exact numeric text; the assignees are the JSON
 * labor.ts stored. The integration tests check every list response against the OpenAPI document.
 */
function listRowJson(figure: (name: RolledFigure) => string, subTasks: string, currencyJson: string, assigneesJson = 'l.assignees_json'): string {
  const number = (name: RolledFigure) => `',"${name}":' || trim_scale(${figure(name)})`;
  return `'{"id":"' || t.id || '","name":' || to_json(t.name)::text || ',"project_id":"' || t.project_id
       || '","billable":' || case when t.billable then 'true' else 'false' end || ',"currency":' || ${currencyJson}
       || ${number('estimated_hours')} || ${number('logged_hours')} || ${number('estimated_labor_cost')} || ${number('actual_labor_cost')}
       || ${number('fixed_cost')} || ${number('total_estimated_cost')} || ${number('total_actual_cost')}
       || ',"parent_task_id":' || coalesce('"' || t.parent_task_id || '"', 'null') || ',"sub_tasks_count":' || ${subTasks}
       || ${number('variance')}
       || ',"status":' || ${jsonText('t.status')} || ',"priority":' || ${jsonText('t.priority')} || ',"phase":' || ${jsonText('t.phase')}
       || ',"assignees":' || coalesce(${assigneesJson}, '[]') || '}'`;
}

/**
 * A listed row's JSON: under billable_filter=all the one refreshRollups stored (l.list_row_json), else
 * (or while a migration has left it empty) rendered here. Rendering in PostgreSQL keeps the service's
 * single thread free: each connection's statement runs in its own process.
 */
const LIST_ROW_JSON = `case when :filter = 'all' and l.list_row_json is not null then l.list_row_json
       else ${listRowJson((figure) => `f.${figure}`, 'f.sub_tasks', 'to_json(cast(:currency as text))::text')} end`;

export type ListGroupField = 'status' | 'priority' | 'phase';

/** The group a list row falls in: its field's value, tasks with none in "None" (CONTRACT section 4). */
export const NONE_GROUP = 'None';

/** A project list in one row, or with groups one row for the whole list (group_name null) and one per group. */
export type ListSummaryRow = ListedFigures & {
  group_name: string | null;
  /** The listed rows as a JSON array's items (whole list only). */
  rows_json: string | null;
  /** The group's task ids as a JSON array's items (groups only). */
  ids_json: string | null;
  /** Whether the project's stored figures were current for the day asked (figures.ts) in the snapshot read. */
  current: boolean;
};

function listSql(groupBy: ListGroupField | undefined): string {
  const sums = figureTexts((figure) => `coalesce(sum(${figure}), 0)`);
  if (!groupBy) {
    return `select null as group_name, string_agg(row_json, ',' order by created_at, id) as rows_json, null as ids_json, ${sums},
            ${FIGURES_CURRENT} as current
     from (select t.created_at, t.id, f.*, ${LIST_ROW_JSON} as row_json ${LISTED_TASKS}) listed`;
  }
  // grouping sets: the whole list (grouping() = 1) and each group, from one pass over the rows.
  return `select case when grouping(group_name) = 0 then group_name end as group_name,
            case when grouping(group_name) = 1 then string_agg(row_json, ',' order by created_at, id) end as rows_json,
            case when grouping(group_name) = 0 then string_agg('"' || id || '"', ',' order by created_at, id) end as ids_json,
            ${sums}, ${FIGURES_CURRENT} as current
     from (select t.created_at, t.id, coalesce(t.${groupBy}, '${NONE_GROUP}') as group_name, f.*, ${LIST_ROW_JSON} as row_json
           ${LISTED_TASKS}) listed
     group by grouping sets ((), (group_name))`;
}

/**
 * A project list under the filter, read and added up by one statement: the rows as JSON text in
 * creation order with the list's sums and, with groupBy, each group's task ids and sums (exact
 * numerics), and whether the stored figures were current for `today` in that statement's snapshot.
 */
export async function listSummary(
  db: Knex,
  scope: ListScope & { currency: string; groupBy?: ListGroupField },
  now: string,
): Promise<ListSummaryRow[]> {
  const { groupBy, ...bindings } = scope;
  const statement = db.raw(listSql(groupBy), { ...bindings, allLevels: false, ...stampBindings(now) });
  const result = await prepared(statement, `finance_list_${groupBy ?? 'rows'}`);
  return result.rows;
}

export type TaskLaborRow = {
  task_id: string;
  estimated_labor_cost: string;
  logged_hours: string;
  actual_labor_cost: string;
  total_estimated_cost: string;
  total_actual_cost: string;
  variance: string;
  /** Null: not stored by this refresh (computed and stored by the task's next breakdown read). */
  members_json: string | null;
  grouped_members_json: string | null;
  assignees_json: string;
};

/**
 * Whether the project's stamp is current at the instant :now (figures.ts; marks of single tasks aside),
 * its currency, and the next `limit` live tasks, by id after `after`, that carry no mark and whose labor
 * rows hold no breakdown parts of the project's parts version, with the versions storeBreakdownParts
 * needs (none when the figures are not current: a refresh comes first). One statement, one snapshot:
 * the currency is the one the versions were stored under.
 */
export async function tasksWithoutParts(
  db: Knex,
  teamId: string,
  projectId: string,
  now: string,
  after: string,
  limit: number,
): Promise<{ current: boolean; currency: string | undefined; tasks: { task_id: string; version: string; parts_version: string }[] }> {
  const result = await db.raw(
    `select p.currency, ${stampOf('p')} as current, d.task_id, d.version, d.parts_version
     from projects p
     left join lateral (
       select t.id as task_id, l.xmin::text as version, coalesce(pf.parts_version, 0)::text as parts_version
       from tasks t
       join task_labor l on l.team_id = t.team_id and l.task_id = t.id
       left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
       where t.team_id = p.team_id and t.project_id = p.id and t.archived_at is null and t.id > cast(:after as uuid)
         and ${PARTS_MISSING}
         and ${stampCurrentOf('p', 't.id')}
       order by t.id
       limit :limit
     ) d on true
     where p.team_id = :teamId and p.id = :projectId`,
    { teamId, projectId, after, limit, ...stampBindings(now) },
  );
  const rows: { currency: string; current: boolean; task_id: string | null; version: string; parts_version: string }[] = result.rows;
  return {
    current: Boolean(rows[0]?.current),
    currency: rows[0]?.currency,
    tasks: rows.flatMap((row) => (row.task_id === null ? [] : [{ task_id: row.task_id, version: row.version, parts_version: row.parts_version }])),
  };
}

/** The projects some of whose live tasks have stored figures without current breakdown parts. */
export async function projectsWithoutParts(db: Knex): Promise<{ team_id: string; project_id: string }[]> {
  const result = await db.raw(
    `select p.team_id, p.id as project_id from projects p
     left join project_figures pf on pf.team_id = p.team_id and pf.project_id = p.id
     where exists (
       select 1 from task_labor l join tasks t on t.team_id = l.team_id and t.id = l.task_id
       where l.team_id = p.team_id and l.project_id = p.id and t.archived_at is null
         and ${PARTS_MISSING})
     order by p.team_id, p.id`,
  );
  return result.rows;
}

/** A task's breakdown parts to store, with the labor row version and the project's parts version they were computed against. */
export type PartsToStore = {
  task_id: string;
  /** The labor row's xmin when its figures were found current. */
  version: string;
  parts_version: string;
  members_json: string;
  grouped_members_json: string;
};

/**
 * Stores tasks' breakdown parts computed after their figures were stored (at a breakdown read, or by
 * parts-fill.ts), each with the project's parts version that was found then (`parts_version`), if
 * its labor row is still the version that was found (`version`, its xmin: any refresh since rewrote it)
 * and holds no parts of that parts version. Parts computed from inputs newer than the row are harmless:
 * the write that changed them left a mark, so the row is not current until a refresh rewrites it. A row
 * a refresh is rewriting is skipped, not waited for (the refresh stores its own). Returns how many were stored.
 */
export async function storeBreakdownParts(db: Knex, teamId: string, parts: readonly PartsToStore[]): Promise<number> {
  if (parts.length === 0) return 0;
  const result = await db.raw(
    `update task_labor l
     set members_json = s.members_json, grouped_members_json = s.grouped_members_json, parts_version = s.parts_version
     from (
       select w.task_id, r.members_json, r.grouped_members_json, r.parts_version
       from json_to_recordset(cast(:parts as json)) as r (task_id uuid, version text, parts_version bigint, members_json text, grouped_members_json text)
       join task_labor w on w.team_id = :teamId and w.task_id = r.task_id
       where w.xmin = cast(r.version as xid) and (w.members_json is null or w.parts_version <> r.parts_version)
       for update of w skip locked
     ) s
     where l.team_id = :teamId and l.task_id = s.task_id`,
    { teamId, parts: JSON.stringify(parts) },
  );
  return Number(result.rowCount ?? 0);
}

/** The columns of a TaskLaborRow with their SQL types, as stored. */
const LABOR_COLUMNS: readonly [keyof TaskLaborRow, string][] = [
  ['task_id', 'uuid'],
  ['estimated_labor_cost', 'numeric'],
  ['logged_hours', 'numeric'],
  ['actual_labor_cost', 'numeric'],
  ['total_estimated_cost', 'numeric'],
  ['total_actual_cost', 'numeric'],
  ['variance', 'numeric'],
  ['members_json', 'text'],
  ['grouped_members_json', 'text'],
  ['assignees_json', 'text'],
];

const UPSERT_LABOR_SQL = `insert into task_labor (team_id, project_id, parts_version, ${LABOR_COLUMNS.map(([column]) => column).join(', ')})
     select :teamId, :projectId,
            (select coalesce(max(f.parts_version), 0) from project_figures f where f.team_id = :teamId and f.project_id = :projectId),
            ${LABOR_COLUMNS.map(([column]) => `r.${column}`).join(', ')}
     from json_to_recordset(cast(:rows as json)) as r (${LABOR_COLUMNS.map(([column, type]) => `${column} ${type}`).join(', ')})
     on conflict (team_id, task_id) do update set parts_version = excluded.parts_version,
       ${LABOR_COLUMNS.filter(([column]) => column !== 'task_id')
         .map(([column]) => `${column} = excluded.${column}`)
         .join(', ')}`;

/** A task's labor figures without its breakdown parts (TaskLaborRow's other columns). */
export type TaskFiguresRow = Omit<TaskLaborRow, 'members_json' | 'grouped_members_json'>;

const FIGURE_COLUMNS = LABOR_COLUMNS.filter(([column]) => column !== 'members_json' && column !== 'grouped_members_json');

/** FIGURE_COLUMNS' names but the key (task_id): what updateTaskFigures writes of each task. */
const FIGURE_VALUES = FIGURE_COLUMNS.map(([column]) => column).filter((column) => column !== 'task_id');

/** A stored row's parts version that no project's is (they start at 0 and grow): its parts are out of date. */
const PARTS_OUT_OF_DATE = -1;

/**
 * SQL: the task `taskId` (t) and its project's currency (p) of a labor row being rewritten with its
 * list row (listRowJson); each an index lookup, kept apart by `offset 0` (see refreshRollups).
 */
const TASK_AND_CURRENCY = (taskId: string) => `cross join lateral (select * from tasks t where t.team_id = :teamId and t.id = ${taskId} offset 0) t
     cross join lateral (select p.currency from projects p where p.team_id = :teamId and p.id = :projectId offset 0) p`;

/** The rolled figures a task's labor row stores (the others are the task's own columns: TASK_FIGURES). */
const LABOR_FIGURES = ROLLED_FIGURES.filter((figure) => !TASK_FIGURES.has(figure));

/** `<kind>_<figure>` columns of each kind's change of every labor figure (updateTaskFigures' climb). */
const KIND_DELTAS = (['billable', 'non_billable'] as const).flatMap((kind) => LABOR_FIGURES.map((figure) => `${kind}_${figure}`));

/*
 * Stores some tasks' new labor figures (r) and, in the same statement, adds what changed in them to
 * the stored roll-ups of each of those tasks and of their ancestors: a roll-up is its subtree's sum, so
 * its new value is its old one plus the change of each task of the subtree whose figures changed. The
 * subtree is refreshRollups' walk (non-archived children down from the task): a task's change counts
 * in its own roll-up if it is not archived, and climbs from a task to its parent while the task is not
 * archived. Each row is written once, with its list row, where storing the figures and then summing
 * every subtree again wrote the tasks twice and read every subtree (BENCHMARKS.md, tenth run).
 * Ancestors whose figures no change moved (a rename) are left alone. Counts the tasks of r it stored.
 */
const UPDATE_FIGURES_SQL = `with recursive
     r as (select * from json_to_recordset(cast(:rows as json)) as r (${FIGURE_COLUMNS.map(([column, type]) => `${column} ${type}`).join(', ')})),
     changed as (
       select r.task_id, ${LABOR_FIGURES.map((figure) => `r.${figure} - l.${figure} as ${figure}`).join(', ')}
       from r join task_labor l on l.team_id = :teamId and l.project_id = :projectId and l.task_id = r.task_id
     ),
     climb (id, billable, ${LABOR_FIGURES.join(', ')}) as (
       select t.id, t.billable, ${LABOR_FIGURES.map((figure) => `c.${figure}`).join(', ')}
       from changed c join tasks t on t.team_id = :teamId and t.id = c.task_id and t.archived_at is null
       where ${LABOR_FIGURES.map((figure) => `c.${figure} <> 0`).join(' or ')}
       union all
       select t.parent_task_id, u.billable, ${LABOR_FIGURES.map((figure) => `u.${figure}`).join(', ')}
       from climb u join tasks t on t.team_id = :teamId and t.id = u.id and t.archived_at is null
       where t.parent_task_id is not null
     ),
     deltas as (
       select id, ${LABOR_FIGURES.flatMap((figure) => [
         `coalesce(sum(${figure}) filter (where billable), 0) as billable_${figure}`,
         `coalesce(sum(${figure}) filter (where not billable), 0) as non_billable_${figure}`,
       ]).join(', ')}
       from climb group by id
     ),
     changes as (
       select coalesce(r.task_id, d.id) as task_id, r.task_id is not null as own,
              ${FIGURE_VALUES.map((column) => `r.${column}`).join(', ')},
              ${KIND_DELTAS.map((column) => `coalesce(d.${column}, 0) as ${column}`).join(', ')}
       from r full join deltas d on d.id = r.task_id
     ),
     updated as (
       update task_labor l
       set parts_version = case when u.own then ${PARTS_OUT_OF_DATE} else l.parts_version end,
           ${FIGURE_VALUES.map((column) => `${column} = case when u.own then u.${column} else l.${column} end`).join(', ')},
           ${KIND_DELTAS.map((column) => `tree_${column} = l.tree_${column} + u.${column}`).join(', ')},
           list_row_json = ${listRowJson(
             (figure) =>
               TASK_FIGURES.has(figure)
                 ? `(l.tree_billable_${figure} + l.tree_non_billable_${figure})`
                 : `(l.tree_billable_${figure} + u.billable_${figure} + l.tree_non_billable_${figure} + u.non_billable_${figure})`,
             'l.children',
             'to_json(p.currency)::text',
             'case when u.own then u.assignees_json else l.assignees_json end',
           )}
       from changes u
       ${TASK_AND_CURRENCY('u.task_id')}
       where l.team_id = :teamId and l.project_id = :projectId and l.task_id = u.task_id
       returning u.own
     )
     select count(*) filter (where own) as stored from updated`;

/** Rows per statement of a batched write: thousands of rows are one JSON value to send and parse, not ten bound parameters each. */
const WRITE_BATCH = 2000;

/**
 * Stores tasks' labor figures and breakdown parts (of the project's current parts version), replacing
 * what was there, one JSON parameter per batch.
 */
export async function upsertTaskLabor(db: Knex, teamId: string, projectId: string, rows: readonly TaskLaborRow[]): Promise<void> {
  for (let from = 0; from < rows.length; from += WRITE_BATCH) {
    await prepared(db.raw(UPSERT_LABOR_SQL, { teamId, projectId, rows: JSON.stringify(rows.slice(from, from + WRITE_BATCH)) }), 'finance_upsert_labor');
  }
}

/**
 * Stores stored tasks' new labor figures, with what they changed added to their own and their
 * ancestors' stored roll-ups (UPDATE_FIGURES_SQL: their stored roll-ups must be their subtrees' sums
 * before), and marks their breakdown parts out of date (a parts version no project has) without
 * emptying them: emptying deleted each row's compressed parts from TOAST on the spot, 115 ms for 600
 * tasks after a rename on the benchmark's largest project; the parts filler or the task's next
 * breakdown read overwrites them later, off the request that refreshed.
 */
export async function updateTaskFigures(db: Knex, teamId: string, projectId: string, rows: readonly TaskFiguresRow[]): Promise<void> {
  for (let from = 0; from < rows.length; from += WRITE_BATCH) {
    const batch = rows.slice(from, from + WRITE_BATCH);
    const result = await prepared(db.raw(UPDATE_FIGURES_SQL, { teamId, projectId, rows: JSON.stringify(batch) }), 'finance_update_figures');
    // Never silently short: every task given has a stored row of this project (the caller read its actuals).
    const updated = Number(result.rows[0]?.stored ?? 0);
    if (updated !== batch.length) throw new Error(`Stored figures of ${updated} of ${batch.length} tasks: the others have no stored row in project ${projectId}`);
  }
}

const KIND_FILTER = { billable: 't.billable', non_billable: 'not t.billable' } as const;

/** `sum(...) filter (...) as tree_<kind>_<figure>` for every kind and figure, from the tasks' own stored figures (t). */
const ROLLUP_SUMS = Object.entries(KIND_FILTER)
  .flatMap(([kind, condition]) => [
    `count(*) filter (where ${condition}) as tree_${kind}_tasks`,
    `count(distinct w.branch) filter (where ${condition}) as children_${kind}`,
    ...ROLLED_FIGURES.map((figure) => `coalesce(sum(t.${figure}) filter (where ${condition}), 0) as tree_${kind}_${figure}`),
  ])
  .join(',\n            ');

const ROLLED_COLUMNS = Object.keys(KIND_FILTER).flatMap((kind) => [`tree_${kind}_tasks`, `children_${kind}`, ...ROLLED_FIGURES.map((figure) => `tree_${kind}_${figure}`)]);

/** The row a list shows under billable_filter=all, from the roll-up being stored (r) and the task (t). */
const STORED_LIST_ROW_JSON = listRowJson(
  (figure) => `(r.tree_billable_${figure} + r.tree_non_billable_${figure})`,
  'r.children',
  'to_json(p.currency)::text',
);

/** The tasks whose roll-ups a refresh recomputes: a `target (id)` CTE (recursive when it climbs to ancestors). */
const ROLLUP_TARGETS_OF = {
  all: `target (id) as (
       select id from tasks where team_id = :teamId and project_id = :projectId and archived_at is null
     )`,
  tasks: `target (id) as (
       select id from tasks
       where team_id = :teamId and project_id = :projectId and archived_at is null
         and id = any(string_to_array(:ids, ',')::uuid[])
       union
       select t.parent_task_id from tasks t join target x on t.team_id = :teamId and t.id = x.id
       where t.parent_task_id is not null
     )`,
};

function rollupSql(targets: string): string {
  return `with recursive
     ${targets},
     walk (root, branch, id) as (
       select id, null::uuid, id from target
       union all
       select w.root, coalesce(w.branch, c.id), c.id
       from walk w
       cross join lateral (
         select c.id from tasks c where c.team_id = :teamId and c.parent_task_id = w.id and c.archived_at is null offset 0
       ) c
     ),
     rolled as (
       select w.root, count(distinct w.branch) as children,
            ${ROLLUP_SUMS}
       from walk w
       cross join lateral (
         select t.billable, ${ROLLED_FIGURES.map((figure) => `${ownFigure(figure)} as ${figure}`).join(', ')}
         from tasks t left join task_labor l on l.team_id = t.team_id and l.task_id = t.id
         where t.team_id = :teamId and t.id = w.id offset 0
       ) t
       group by w.root
     )
     update task_labor l
     set children = r.children, ${ROLLED_COLUMNS.map((column) => `${column} = r.${column}`).join(', ')},
         list_row_json = ${STORED_LIST_ROW_JSON}
     from rolled r
     ${TASK_AND_CURRENCY('r.root')}
     where l.team_id = :teamId and l.task_id = any(array(select root from rolled)) and l.task_id = r.root`;
}

/**
 * Recomputes the stored roll-ups (see migrations/..._002_stored_breakdowns.ts) of the given tasks and
 * all their ancestors, or of every task of the project, from the tasks' own stored figures: each from
 * its whole non-archived subtree, in one statement. Refreshes of a project are serialised (figures.ts);
 * a write that changes a subtree while it is summed leaves its marks (and a newer revision), so the
 * roll-ups it touches are summed again by the next refresh before any read answers them. The lateral
 * subqueries (kept apart by `offset 0`) and the array of roots make each step an index lookup
 * whatever the statistics say: planned as joins, the recursive walk's size is guessed so high (and a
 * freshly loaded task_labor's so low) that one task's refresh scanned every task or labor row of the
 * team.
 */
export async function refreshRollups(db: Knex, teamId: string, projectId: string, taskIds: readonly string[] | 'all'): Promise<void> {
  if (taskIds === 'all') {
    await prepared(db.raw(rollupSql(ROLLUP_TARGETS_OF.all), { teamId, projectId }), 'finance_refresh_rollups_all');
  } else if (taskIds.length > 0) {
    await prepared(db.raw(rollupSql(ROLLUP_TARGETS_OF.tasks), { teamId, projectId, ids: taskIds.join(',') }), 'finance_refresh_rollups_tasks');
  }
}
