import type { Knex } from 'knex';
import { turns } from '../../turns';
import { todayOf } from '../../clock';
import type { RateSource } from '../rules/calculator';
import { DayRange, Scope, byScopeKind, manyTasks, named, readRows, scopeCte } from './scope';

/*
 * Who takes part in the tasks in scope, with their role and rate today and their cost lines: what the
 * calculator (rules/calculator.ts) computes a task's labor figures from. Also the SQL that says which
 * role and rate hold on a day (DATED_PERIODS), shared with cost-changes.ts.
 */

/** Row shape: one person taking part in one task in scope (assignee, logger, or both). */
export type ParticipantRow = {
  task_id: string;
  team_member_id: string;
  name: string;
  avatar_url: string | null;
  is_assignee: boolean;
  /** Whether the member ever logged time on the task (whatever the range). */
  has_logged_time: boolean;
  /** The member's role in the project today, and its rates resolved today (docs/finance-rules.md R22; null: none). */
  job_role: string | null;
  hourly_rate: string | null;
  bill_rate: string | null;
  cost_source: RateSource;
  bill_source: RateSource;
  /** The member's cost lines on the task in the range (section 3b rule 4), in no particular order. */
  cost_lines: readonly CostLineRow[];
};

/**
 * One cost line of a ParticipantRow: the rates as exact text (resolved on its days, 0 without one), whether
 * either resolved to none on some of its days, the seconds a whole number.
 */
export type CostLineRow = {
  job_role: string | null;
  hourly_rate: string;
  bill_rate: string;
  cost_missing: boolean;
  bill_missing: boolean;
  seconds: number;
  first_day: string;
  last_day: string;
};

/**
 * Rows of participantsInScope's statement, told apart by `kind`: 0 a participant of a task (a, b: is
 * assignee, has logged time), 1 a member taking part (name, avatar, today's role, rates and their
 * sources), 2 a cost line of a participant (role, rates, a, b: cost and bill rate missing on some day,
 * seconds, first and last day).
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
  bill_rate: string | null;
  cost_source: RateSource | null;
  bill_source: RateSource | null;
  seconds: number | null;
  first_day: string | null;
  last_day: string | null;
};

/** SQL: rate-card entries (those `source` holds) as the days each is in force, from its day until its role's next entry's. */
export const RATE_PERIODS = (source: string) => `
       select job_role_id, hourly_rate, effective_from,
              coalesce(lead(effective_from) over (partition by job_role_id order by effective_from), 'infinity'::date)
       from ${source}`;

/**
 * SQL, CTEs over :projectId: `project_today (day)`, today in its time zone at the service clock's
 * instant :now; `role_period`, `rate_period` (a role's cost and bill rates) and `member_rate_period` (a
 * member's own rates, docs/finance-rules.md R22), each dated entry as the days it is in force (from its
 * day until the next entry's). A member's first role counts from the beginning of time
 * (section 3b rule 3): its period starts at -infinity, not at its entry's 1970-01-01, since a log of
 * the first hours of 1970 (UTC) falls on 1969-12-31 in a project west of UTC. A rate has no such
 * rule: before a role's first entry it has none (rule 2: 0). The one place that says which role and
 * rate hold on a day.
 */
export const DATED_PERIODS = `project_today (day) as (
       select ${todayOf('p')} from projects p where p.team_id = :teamId and p.id = :projectId
     ),
     role_period (team_member_id, job_role_id, starts, ends) as (
       select team_member_id, job_role_id,
              case when row_number() over member_entries = 1 then '-infinity'::date else effective_from end,
              coalesce(lead(effective_from) over member_entries, 'infinity'::date)
       from project_member_roles where team_id = :teamId and project_id = :projectId
       window member_entries as (partition by team_member_id order by effective_from)
     ),
     rate_period (job_role_id, hourly_rate, bill_rate, starts, ends) as (
       select job_role_id, hourly_rate, bill_rate, effective_from,
              coalesce(lead(effective_from) over (partition by job_role_id order by effective_from), 'infinity'::date)
       from project_rate_cards where team_id = :teamId and project_id = :projectId
     ),
     member_rate_period (team_member_id, hourly_rate, bill_rate, starts, ends) as (
       select team_member_id, hourly_rate, bill_rate, effective_from,
              coalesce(lead(effective_from) over (partition by team_member_id order by effective_from), 'infinity'::date)
       from project_member_rates where team_id = :teamId and project_id = :projectId
     )`;

/** SQL (over a member's own rates `own` and its role's `rate` on a day): a rate resolved (R22), null for none. */
const RESOLVED = (rate: 'hourly_rate' | 'bill_rate', own: string) => `coalesce(${own}.${rate}, rate.${rate})`;

/** SQL: where a rate resolved by RESOLVED comes from. */
const SOURCE = (rate: 'hourly_rate' | 'bill_rate', own: string) =>
  `case when ${own}.${rate} is not null then 'member' when rate.${rate} is not null then 'role' else 'none' end`;

/**
 * SQL joins (over DATED_PERIODS): the role today of the member `member` (`jr`, its name), that role's
 * rates today (`rate`) and the member's own rates today (`own`).
 */
const ROLE_AND_RATE_TODAY = (member: string) => `cross join project_today pt
     left join role_period role on role.team_member_id = ${member} and pt.day >= role.starts and pt.day < role.ends
     left join job_roles jr on jr.team_id = :teamId and jr.id = role.job_role_id
     left join rate_period rate on rate.job_role_id = role.job_role_id and pt.day >= rate.starts and pt.day < rate.ends
     left join member_rate_period own on own.team_member_id = ${member} and pt.day >= own.starts and pt.day < own.ends`;

/** SQL columns (over ROLE_AND_RATE_TODAY): the rates resolved today, as text, and their sources. */
const RATES_TODAY = `${RESOLVED('hourly_rate', 'own')}::text as hourly_rate, ${RESOLVED('bill_rate', 'own')}::text as bill_rate,
            ${SOURCE('hourly_rate', 'own')} as cost_source, ${SOURCE('bill_rate', 'own')} as bill_source`;

/**
 * SQL (over DATED_PERIODS): the cost lines (docs/finance-rules.md R15.3, R22) of the per-day totals `d`
 * that `join` and `where` keep: each task and member's logged seconds grouped by the role on the day
 * and the cost and bill rates resolved on the day (the member's own, else its role's, else 0), with
 * whether either resolved to none on some day of the line, and the first and last day of each line.
 */
const COST_LINES = (join: string, where: string) => `
       select d.task_id, d.team_member_id, role.job_role_id,
              trim_scale(coalesce(${RESOLVED('hourly_rate', 'own')}, 0)) as hourly_rate,
              trim_scale(coalesce(${RESOLVED('bill_rate', 'own')}, 0)) as bill_rate,
              bool_or(${RESOLVED('hourly_rate', 'own')} is null) as cost_missing, bool_or(${RESOLVED('bill_rate', 'own')} is null) as bill_missing,
              min(d.day) as first_day, max(d.day) as last_day, sum(d.total_seconds) as seconds
       from task_member_day_time d
       ${join}
       left join role_period role on role.team_member_id = d.team_member_id and d.day >= role.starts and d.day < role.ends
       left join rate_period rate on rate.job_role_id = role.job_role_id and d.day >= rate.starts and d.day < rate.ends
       left join member_rate_period own on own.team_member_id = d.team_member_id and d.day >= own.starts and d.day < own.ends
       where d.total_seconds > 0 and ${where}
       group by d.task_id, d.team_member_id, role.job_role_id,
                trim_scale(coalesce(${RESOLVED('hourly_rate', 'own')}, 0)), trim_scale(coalesce(${RESOLVED('bill_rate', 'own')}, 0))`;

/** SQL: participantsInScope's statement over a scope (its `scope (id)` CTE). */
const participantsSql = (scopeSql: string) => `with recursive ${scopeSql},
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
            null::text as name, null::text as avatar_url, null::text as job_role, null::text as hourly_rate, null::text as bill_rate,
            null::text as cost_source, null::text as bill_source, null::bigint as seconds, null::text as first_day, null::text as last_day
     from participant p
     union all
     select 1, null, m.id, null, null, m.name, m.avatar_url, jr.name, ${RATES_TODAY}, null, null, null
     from team_members m
     ${ROLE_AND_RATE_TODAY('m.id')}
     where m.team_id = :teamId and m.id in (select team_member_id from participant)
     union all
     select 2, l.task_id, l.team_member_id, l.cost_missing, l.bill_missing, null, null, jr.name, l.hourly_rate::text, l.bill_rate::text,
            null, null, l.seconds, l.first_day::text, l.last_day::text
     from line l left join job_roles jr on jr.team_id = :teamId and jr.id = l.job_role_id`;

/** The statements of this file, by name (test/unit/sql-golden.test.ts). */
export const PARTICIPANT_STATEMENTS = byScopeKind('finance_participant_parts', participantsSql);

/**
 * The people taking part in the tasks in scope (docs/finance-rules.md R3), with their role and its
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
    participantsSql(cte.sql),
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
     select a.task_id, m.id as team_member_id, m.name, m.avatar_url, jr.name as job_role, ${RATES_TODAY},
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
        bill_rate: part.bill_rate as string,
        cost_missing: Boolean(part.a),
        bill_missing: Boolean(part.b),
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
      bill_rate: member.bill_rate,
      cost_source: member.cost_source as RateSource,
      bill_source: member.bill_source as RateSource,
      cost_lines: lines.get(part.task_id as string)?.get(part.team_member_id) ?? [],
    });
  }
  return rows;
}
