import type { Knex } from 'knex';
import { batchesOf } from '../../db/cursor';
import type { RateEntryRow } from '../../projects/projects.repository';
import { DATED_PERIODS, RATE_PERIODS } from './participants';

/*
 * Which tasks a changed input (a role's rates, a member's role or display) can change the figures of,
 * and the cost lines a change of rates changes (a rate preview's delta).
 */

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
 * (docs/finance-rules.md R15): those with time logged on or after that day by someone whose role on the day
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
 * The cost lines (docs/finance-rules.md R15.3, over all days) that a change of rates can change, under
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
 * after the last log), no line can change and nothing is read; the days are read in place, never
 * copied to a temporary table and costed one by one.
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
