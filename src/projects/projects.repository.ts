import type { Knex } from 'knex';
import { prepared, preparedRaw } from '../db/prepared';
import { ListOrder, Page, PageRequest, pageSql, takePage } from '../http/paging';

export type ProjectRow = {
  id: string;
  name: string;
  currency: string;
  budget: string | null;
  /** Hours budget (2 decimals) or null; how budgets count (whole life or month) and their alert percentages (docs/finance-rules.md R28). */
  hours_budget: string | null;
  budget_period: 'total' | 'month';
  budget_alerts: number[];
  /** The IANA time zone a log's day and "today" are taken in (docs/finance-rules.md R16.1). */
  time_zone: string;
  /** What every rate entered in the project is per: 'hour' or 'day' (docs/finance-rules.md R21). */
  rate_unit: RateUnit;
  /** Hours in a day of a 'day' project, exact text (numeric(4, 2)). */
  hours_per_day: string;
  created_at: Date;
  updated_at: Date;
  /** Bumped by every write to the project (lockProject); not part of any response. */
  revision: number;
  /** The revision of the last write that changed every task's inputs (see lockProject). */
  reset_revision: number;
};

export type RateUnit = 'hour' | 'day';

/** A project's columns as ProjectRow holds them. */
export const PROJECT_COLUMNS = [
  'id', 'name', 'currency', 'budget', 'time_zone', 'rate_unit', 'hours_per_day', 'hours_budget', 'budget_period', 'budget_alerts',
  'created_at', 'updated_at', 'revision', 'reset_revision',
];

/** The beginning of time for dated rates and roles: a member's first role counts from it. */
export const BEGINNING = '1970-01-01';

export async function insertProject(
  db: Knex,
  teamId: string,
  fields: { name: string; currency: string; budget: string | null; time_zone: string; rate_unit: RateUnit; hours_per_day: string; hours_budget?: string | null; budget_period?: string; budget_alerts?: number[] },
): Promise<ProjectRow> {
  const [row] = await db('projects').insert({ team_id: teamId, ...alertsAsArray(db, fields) }).returning(PROJECT_COLUMNS);
  return row;
}

/** Alert percentages as an integer[] literal, the same text for both drivers. */
function alertsAsArray<T extends { budget_alerts?: number[] }>(db: Knex, fields: T) {
  if (fields.budget_alerts === undefined) return fields;
  return { ...fields, budget_alerts: db.raw('cast(? as integer[])', [`{${fields.budget_alerts.join(',')}}`]) };
}

/** A project of the team, without a lock (writes take it with finance/read-model/freshness.ts's lockProject). */
export async function findProject(db: Knex, teamId: string, id: string): Promise<ProjectRow | undefined> {
  return prepared(db('projects').where({ team_id: teamId, id }).first(PROJECT_COLUMNS), 'find_project');
}

/** The projects list's order: by name, then id (index projects_list_order_idx). */
export const PROJECTS_ORDER: ListOrder = {
  list: 'projects',
  keys: [
    { sql: 'name', type: 'text' },
    { sql: 'id', type: 'uuid' },
  ],
};

/** A page of the team's projects (two statement names: the first page's text differs from the next pages'). */
export async function listProjects(db: Knex, teamId: string, page: PageRequest): Promise<Page<ProjectRow>> {
  const paged = pageSql(PROJECTS_ORDER, page);
  const sql = `select ${PROJECT_COLUMNS.join(', ')}, ${paged.keys} from projects
    where team_id = :teamId and ${paged.after} order by ${paged.orderBy} limit ${paged.limit}`;
  const name = page.after ? 'projects_list_after' : 'projects_list';
  return takePage((await preparedRaw<ProjectRow>(db, name, sql, { teamId, ...paged.bindings })).rows, PROJECTS_ORDER, page);
}

export async function updateProject(
  db: Knex,
  teamId: string,
  id: string,
  fields: Partial<{ name: string; currency: string; budget: string | null; time_zone: string; rate_unit: RateUnit; hours_per_day: string; hours_budget: string | null; budget_period: string; budget_alerts: number[] }>,
): Promise<ProjectRow> {
  const [row] = await db('projects')
    .where({ team_id: teamId, id })
    .update({ ...alertsAsArray(db, fields), updated_at: db.fn.now() })
    .returning(PROJECT_COLUMNS);
  return row;
}

/** Whether any stored amount of the project has more decimals than `decimals` (blocks a currency change). */
export async function hasAmountsFinerThan(db: Knex, teamId: string, projectId: string, decimals: number): Promise<boolean> {
  const result = await db.raw(
    `select exists (
       select 1 from tasks where team_id = :teamId and project_id = :projectId and fixed_cost <> round(fixed_cost, :decimals)
       union all
       select 1 from project_rate_cards where team_id = :teamId and project_id = :projectId
         and (hourly_rate <> round(hourly_rate, :decimals) or bill_rate <> round(bill_rate, :decimals))
       union all
       select 1 from project_member_rates where team_id = :teamId and project_id = :projectId
         and (hourly_rate <> round(hourly_rate, :decimals) or bill_rate <> round(bill_rate, :decimals))
       union all
       select 1 from projects where team_id = :teamId and id = :projectId and budget <> round(budget, :decimals)
     ) as finer`,
    { teamId, projectId, decimals },
  );
  return Boolean(result.rows[0]?.finer);
}

/** Whether the project has any rate entry, of its card or of a member's overrides (null rates included). */
export async function hasRateEntries(db: Knex, teamId: string, projectId: string): Promise<boolean> {
  const result = await db.raw(
    `select exists (select 1 from project_rate_cards where team_id = :teamId and project_id = :projectId)
         or exists (select 1 from project_member_rates where team_id = :teamId and project_id = :projectId) as has`,
    { teamId, projectId },
  );
  return Boolean(result.rows[0]?.has);
}

/** Whether PostgreSQL knows the IANA time zone `name` (by its exact name). */
export async function isKnownTimeZone(db: Knex, name: string): Promise<boolean> {
  const result = await db.raw('select exists (select 1 from pg_timezone_names where name = ?) as known', [name]);
  return Boolean(result.rows[0]?.known);
}

/**
 * Rebuilds the per-day running totals of a project's time logs, each log's day taken in the project's
 * time zone now (after the zone changed). The caller holds the project's write lock.
 */
export async function rebuildDayTotals(db: Knex, teamId: string, projectId: string): Promise<void> {
  await db('task_member_day_time').where({ team_id: teamId, project_id: projectId }).delete();
  await db.raw(
    `insert into task_member_day_time (team_id, project_id, task_id, team_member_id, day, total_seconds, log_count)
     select l.team_id, t.project_id, l.task_id, l.team_member_id, (l.logged_at at time zone p.time_zone)::date, sum(l.seconds), count(*)
     from tasks t
     join projects p on p.team_id = t.team_id and p.id = t.project_id
     join time_logs l on l.team_id = t.team_id and l.task_id = t.id
     where t.team_id = :teamId and t.project_id = :projectId
     group by l.team_id, t.project_id, l.task_id, l.team_member_id, (l.logged_at at time zone p.time_zone)::date`,
    { teamId, projectId },
  );
}

export type RateCardEntry = { job_role_id: string; job_role_name: string; hourly_rate: string | null; bill_rate: string | null; effective_from: string };

/** The rate card in force on `date`: each role's latest entry on or before it, when that entry has a rate (cost or bill). */
export async function rateCardOn(db: Knex, teamId: string, projectId: string, date: string): Promise<RateCardEntry[]> {
  const result = await db.raw(
    `select r.job_role_id, jr.name as job_role_name, r.hourly_rate, r.bill_rate, r.effective_from::text as effective_from
     from (
       select distinct on (job_role_id) job_role_id, hourly_rate, bill_rate, effective_from from project_rate_cards
       where team_id = :teamId and project_id = :projectId and effective_from <= cast(:date as date)
       order by job_role_id, effective_from desc
     ) r
     join job_roles jr on jr.team_id = :teamId and jr.id = r.job_role_id
     where r.hourly_rate is not null or r.bill_rate is not null
     order by jr.name, r.job_role_id`,
    { teamId, projectId, date },
  );
  return result.rows;
}

export type RateHistoryEntry = {
  job_role_id: string;
  job_role_name: string;
  hourly_rate: string | null;
  bill_rate: string | null;
  effective_from: string;
  written_at: Date;
  written_by: string | null;
};

/** The rate-card history's order: by the day an entry takes effect, then role name, then role id (unique in a project with the day). */
export const RATE_HISTORY_ORDER: ListOrder = {
  list: 'rate-card-history',
  keys: [
    { sql: 'c.effective_from', type: 'date' },
    { sql: 'jr.name', type: 'text' },
    { sql: 'c.job_role_id', type: 'uuid' },
  ],
};

/** A page of the entries of the project's rate card, by the day they take effect, then role name. */
export async function rateCardHistory(db: Knex, teamId: string, projectId: string, page: PageRequest): Promise<Page<RateHistoryEntry>> {
  const paged = pageSql(RATE_HISTORY_ORDER, page);
  const result = await db.raw(
    `select c.job_role_id, jr.name as job_role_name, c.hourly_rate, c.bill_rate, c.effective_from::text as effective_from, c.written_at, c.written_by,
            ${paged.keys}
     from project_rate_cards c join job_roles jr on jr.team_id = c.team_id and jr.id = c.job_role_id
     where c.team_id = :teamId and c.project_id = :projectId and ${paged.after}
     order by ${paged.orderBy} limit ${paged.limit}`,
    { teamId, projectId, ...paged.bindings },
  );
  return takePage(result.rows, RATE_HISTORY_ORDER, page);
}

/** A dated entry of a project's rate card (rateEntries). */
export type RateEntryRow = { job_role_id: string; effective_from: string; hourly_rate: string | null; bill_rate: string | null };

/** Every dated entry of the project's rate card, by role and day. */
export async function rateEntries(db: Knex, teamId: string, projectId: string): Promise<RateEntryRow[]> {
  return db('project_rate_cards')
    .where({ team_id: teamId, project_id: projectId })
    .select('job_role_id', db.raw('effective_from::text as effective_from'), 'hourly_rate', 'bill_rate')
    .orderBy([{ column: 'job_role_id' }, { column: 'effective_from' }]);
}

/**
 * Writes the card in force from `effectiveFrom` on (docs/finance-rules.md R15.1): entries dated on or after it
 * are replaced by one per listed role, and a role that had a rate before that day but is not listed
 * gets a null entry (no rate from that day). Earlier entries are history and stay.
 */
export async function writeRateCard(
  db: Knex,
  teamId: string,
  projectId: string,
  roles: readonly { job_role_id: string; hourly_rate: string | null; bill_rate: string | null }[],
  effectiveFrom: string,
  writtenBy: string,
): Promise<void> {
  await db('project_rate_cards')
    .where({ team_id: teamId, project_id: projectId })
    .andWhere('effective_from', '>=', effectiveFrom)
    .delete();
  const listed = new Set(roles.map((role) => role.job_role_id));
  const before = await db.raw(
    `select distinct on (job_role_id) job_role_id, hourly_rate, bill_rate from project_rate_cards
     where team_id = :teamId and project_id = :projectId and effective_from < cast(:effectiveFrom as date)
     order by job_role_id, effective_from desc`,
    { teamId, projectId, effectiveFrom },
  );
  const endings = (before.rows as { job_role_id: string; hourly_rate: string | null; bill_rate: string | null }[])
    .filter((entry) => (entry.hourly_rate !== null || entry.bill_rate !== null) && !listed.has(entry.job_role_id))
    .map((entry) => ({ job_role_id: entry.job_role_id, hourly_rate: null, bill_rate: null }));
  const rows = [...roles, ...endings].map((role) => ({
    team_id: teamId,
    project_id: projectId,
    effective_from: effectiveFrom,
    written_by: writtenBy,
    ...role,
  }));
  if (rows.length > 0) await db('project_rate_cards').insert(rows);
}

export type ProjectMemberEntry = {
  team_member_id: string;
  name: string;
  /** The member's role today. */
  job_role_id: string | null;
  job_role_name: string | null;
  /** Its role history, by the day each takes effect (the first from 1970-01-01: the beginning). */
  roles: { job_role_id: string | null; job_role_name: string | null; effective_from: string }[];
};

/** The project members list's order: by name, then member id. */
export const PROJECT_MEMBERS_ORDER: ListOrder = {
  list: 'project-members',
  keys: [
    { sql: 'm.name', type: 'text' },
    { sql: 'pm.team_member_id', type: 'uuid' },
  ],
};

/** A page of the project's members (or one), with their role today (`today`, in the project's zone) and their role history. */
export async function listProjectMembers(
  db: Knex,
  teamId: string,
  projectId: string,
  today: string,
  page: PageRequest,
  memberId?: string,
): Promise<Page<ProjectMemberEntry>> {
  const paged = pageSql(PROJECT_MEMBERS_ORDER, page);
  const result = await db.raw(
    `select pm.team_member_id, m.name,
            (select coalesce(json_agg(json_build_object('job_role_id', r.job_role_id, 'job_role_name', jr.name,
                                                        'effective_from', r.effective_from::text) order by r.effective_from), '[]')::text
             from project_member_roles r left join job_roles jr on jr.team_id = r.team_id and jr.id = r.job_role_id
             where r.team_id = pm.team_id and r.project_id = pm.project_id and r.team_member_id = pm.team_member_id) as roles_json,
            ${paged.keys}
     from project_members pm
     join team_members m on m.team_id = pm.team_id and m.id = pm.team_member_id
     where pm.team_id = :teamId and pm.project_id = :projectId
       and (cast(:memberId as uuid) is null or pm.team_member_id = cast(:memberId as uuid))
       and ${paged.after}
     order by ${paged.orderBy} limit ${paged.limit}`,
    { teamId, projectId, memberId: memberId ?? null, ...paged.bindings },
  );
  const { rows, next } = takePage(result.rows as { team_member_id: string; name: string; roles_json: string }[], PROJECT_MEMBERS_ORDER, page);
  const entries = rows.map((row) => {
    const roles = JSON.parse(row.roles_json) as ProjectMemberEntry['roles'];
    const current = roles.filter((entry) => entry.effective_from <= today).at(-1) ?? roles[0];
    return {
      team_member_id: row.team_member_id,
      name: row.name,
      job_role_id: current?.job_role_id ?? null,
      job_role_name: current?.job_role_name ?? null,
      roles,
    };
  });
  return { rows: entries, next };
}

/**
 * Adds the member to the project (its first role from the beginning) or changes its role from
 * `effectiveFrom` on (entries dated on or after it are replaced); true when it was added.
 */
export async function setProjectMemberRole(
  db: Knex,
  teamId: string,
  projectId: string,
  memberId: string,
  jobRoleId: string | null,
  effectiveFrom: string,
  writtenBy: string,
): Promise<boolean> {
  const result = await db.raw(
    `insert into project_members (team_id, project_id, team_member_id) values (?, ?, ?)
     on conflict (team_id, project_id, team_member_id) do nothing
     returning true as inserted`,
    [teamId, projectId, memberId],
  );
  const added = result.rows.length > 0;
  const from = added ? BEGINNING : effectiveFrom;
  const key = { team_id: teamId, project_id: projectId, team_member_id: memberId };
  await db('project_member_roles').where(key).andWhere('effective_from', '>=', from).delete();
  await db('project_member_roles').insert({ ...key, effective_from: from, job_role_id: jobRoleId, written_by: writtenBy });
  return added;
}

export async function deleteProjectMember(db: Knex, teamId: string, projectId: string, memberId: string): Promise<number> {
  return db('project_members').where({ team_id: teamId, project_id: projectId, team_member_id: memberId }).delete();
}

/** Names of the non-archived tasks of the project that the member is assigned to (at most a few). */
export async function tasksAssignedTo(db: Knex, teamId: string, projectId: string, memberId: string): Promise<string[]> {
  const rows: { name: string }[] = await db('task_assignees as a')
    .join('tasks as t', function joinTask() {
      this.on('t.team_id', 'a.team_id').andOn('t.id', 'a.task_id');
    })
    .where({ 'a.team_id': teamId, 'a.team_member_id': memberId, 't.project_id': projectId })
    .whereNull('t.archived_at')
    .select('t.name')
    .orderBy('t.name')
    .limit(5);
  return rows.map((r) => r.name);
}
