import type { Knex } from 'knex';
import { nowIso, todayIn, todayOf } from '../clock';
import { prepared, preparedRaw } from '../db/prepared';
import { CALCULATOR_VERSION } from '../finance/calculator';

export type ProjectRow = {
  id: string;
  name: string;
  currency: string;
  budget: string | null;
  /** The IANA time zone a log's day and "today" are taken in (CONTRACT section 3b rule 1). */
  time_zone: string;
  created_at: Date;
  updated_at: Date;
  /** Bumped by every write to the project (lockProject); not part of any response. */
  revision: number;
  /** The revision of the last write that changed every task's inputs (see lockProject). */
  reset_revision: number;
};

const COLUMNS = ['id', 'name', 'currency', 'budget', 'time_zone', 'created_at', 'updated_at', 'revision', 'reset_revision'];

/** The beginning of time for dated rates and roles: a member's first role counts from it. */
export const BEGINNING = '1970-01-01';

export async function insertProject(
  db: Knex,
  teamId: string,
  fields: { name: string; currency: string; budget: string | null; time_zone: string },
): Promise<ProjectRow> {
  const [row] = await db('projects').insert({ team_id: teamId, ...fields }).returning(COLUMNS);
  // No tasks yet, so nothing to compute: its (empty) figures are current today (see finance/figures.ts).
  await db('project_figures').insert({
    team_id: teamId,
    project_id: row.id,
    revision: row.revision,
    day: todayIn(row.time_zone),
    calculator_version: CALCULATOR_VERSION,
  });
  return row;
}

/**
 * What a write may change in a project's derived figures, recorded by lockProject in the write's own
 * transaction (src/finance/figures.ts reads it back):
 *   - 'task-figures': only those tasks' own figures (a time log, a fixed cost), not the tree: the write
 *     takes the project's lock shared, so such writes to one project run side by side;
 *   - 'tasks': those tasks' own inputs or place (each is marked, with the parent it has now, so a move
 *     or an archive also recomputes the old parent's roll-ups);
 *   - 'member': the member's role in the project from day `from` on (null: from today in the project's
 *     time zone; '-infinity': every day, its role history removed; 'infinity': no day, only how it shows,
 *     its name or avatar): recorded as one mark per project it takes part in (stale_inputs), which a
 *     refresh works out into the tasks it changes (src/finance/figures.ts);
 *   - 'rates': some roles' rates from a day on (the rate card); which ones is known once the card is
 *     written, and recorded then by recordRateChange, in the same transaction;
 *   - 'all': the inputs of every task (the currency, the time zone);
 *   - 'none': nothing a stored figure depends on, or only tasks that have no stored figures yet (a new
 *     task: with the revision bumped, a refresh computes every task without a stored row).
 */
export type Invalidation =
  | { kind: 'none' }
  | { kind: 'all' }
  | { kind: 'task-figures'; taskIds: readonly string[] }
  | { kind: 'tasks'; taskIds: readonly string[] }
  | { kind: 'member'; memberId: string; from: string | null }
  | { kind: 'rates' };

/**
 * Marks tasks of one project stale (one row per write and task, told apart by a sequence number): the
 * tasks whose ids `ids` (SQL) selects. Run after the locks are taken, so no concurrent change is missed.
 */
async function markStale(db: Knex, teamId: string, projectId: string, ids: string, bindings: Record<string, string>) {
  await db.raw(
    `insert into stale_tasks (team_id, project_id, task_id, revision)
     select p.team_id, p.id, marked.id, p.revision
     from (${ids}) as marked (id)
     join tasks t on t.team_id = :teamId and t.id = marked.id
     join projects p on p.team_id = t.team_id and p.id = t.project_id
     where p.id = :projectId`,
    { teamId, projectId, ...bindings },
  );
}

/** Marks tasks of one project by id. */
async function markTasks(db: Knex, teamId: string, projectId: string, taskIds: readonly string[]) {
  await db.raw(
    `insert into stale_tasks (team_id, project_id, task_id, revision)
     select p.team_id, p.id, marked.id, p.revision
     from projects p cross join unnest(string_to_array(:ids, ',')::uuid[]) as marked (id)
     where p.team_id = :teamId and p.id = :projectId`,
    { teamId, projectId, ids: taskIds.join(',') },
  );
}

/**
 * The projects a member takes part in: assigned to one of their tasks, or with time logged on one
 * (ever: the running totals' index by member and project answers it alone).
 */
const PROJECTS_OF_MEMBER = `select t.project_id from task_assignees a join tasks t on t.team_id = a.team_id and t.id = a.task_id
  where a.team_id = :teamId and a.team_member_id = :memberId
  union
  select x.project_id from task_member_time x where x.team_id = :teamId and x.team_member_id = :memberId`;

async function recordInvalidation(db: Knex, teamId: string, projectId: string | 'team', change: Invalidation): Promise<void> {
  if (change.kind === 'task-figures' && change.taskIds.length > 0 && projectId !== 'team') {
    await markTasks(db, teamId, projectId, change.taskIds);
  } else if (change.kind === 'tasks' && change.taskIds.length > 0 && projectId !== 'team') {
    // The tasks, then the parents they have now.
    await markTasks(db, teamId, projectId, change.taskIds);
    await markStale(db, teamId, projectId, `select c.parent_task_id from tasks c
      where c.team_id = :teamId and c.id = any(string_to_array(:ids, ',')::uuid[]) and c.parent_task_id is not null`, {
      ids: change.taskIds.join(','),
    });
  } else if (change.kind === 'member') {
    // A mark per project, not per task: a member of the benchmark's dataset takes part in some 11,000
    // tasks, whose marks cost the write 100 ms. The refresh finds the tasks.
    await db.raw(
      `insert into stale_inputs (team_id, project_id, team_member_id, from_day)
       select p.team_id, p.id, cast(:memberId as uuid), coalesce(cast(:from as date), ${todayOf('p')})
       from projects p
       where p.team_id = :teamId and p.id in (${PROJECTS_OF_MEMBER}) and (cast(:projectId as uuid) is null or p.id = cast(:projectId as uuid))`,
      { teamId, memberId: change.memberId, from: change.from, now: nowIso(), projectId: projectId === 'team' ? null : projectId },
    );
  }
}

/**
 * Records a change to a member's role in a project from day `from` on, found once written (a member
 * new to the project takes its role from the beginning, so time it logged before joining is costed
 * anew). In the write's transaction, under the project's lock (lockProject's 'member').
 */
export async function recordMemberChange(db: Knex, teamId: string, projectId: string, memberId: string, from: string): Promise<void> {
  await recordInvalidation(db, teamId, projectId, { kind: 'member', memberId, from });
}

/**
 * Records a rate-card write's change (lockProject's 'rates'), once the card is written: the roles whose
 * rate on some day from `from` on is not what it was. In the write's transaction, under its lock.
 */
export async function recordRateChange(db: Knex, teamId: string, projectId: string, roleIds: readonly string[], from: string): Promise<void> {
  if (roleIds.length === 0) return;
  await db.raw(
    `insert into stale_inputs (team_id, project_id, job_role_id, from_day)
     select :teamId, :projectId, role.id, cast(:from as date) from unnest(string_to_array(:roles, ',')::uuid[]) as role (id)`,
    { teamId, projectId, roles: roleIds.join(','), from },
  );
}

/**
 * The one helper that takes a project's write lock: every write to a project (its own fields, its
 * tasks and their figures, its rate card and members) calls it first, and it records what the write
 * may change (`change`) in the write's own transaction. A write to some tasks' own figures
 * ('task-figures': time logs, fixed costs) takes the project's row shared and only marks those tasks,
 * so it updates no row every such write must update; every other write takes the row exclusively and
 * bumps the project's revision (its writes are serialised, and figures stamped with an older revision
 * are known out of date).
 */
export async function lockProject(db: Knex, teamId: string, id: string, change: Invalidation): Promise<ProjectRow | undefined> {
  if (change.kind === 'task-figures') {
    const row = await prepared(db('projects').where({ team_id: teamId, id }).forShare().first(COLUMNS), 'lock_project_shared');
    if (row) await recordInvalidation(db, teamId, id, change);
    return row;
  }
  const [row] = await prepared(
    db('projects')
      .where({ team_id: teamId, id })
      .update({
        revision: db.raw('revision + 1'),
        reset_revision: change.kind === 'all' ? db.raw('revision + 1') : db.raw('reset_revision'),
      })
      .returning(COLUMNS),
    change.kind === 'all' ? 'lock_project_for_reset' : 'lock_project_for_write',
  );
  if (row) await recordInvalidation(db, teamId, id, change);
  return row;
}

/**
 * SQL, the body of a CTE: the given columns of the project of the non-archived task :taskId of
 * :teamId, its row taken shared: the lock of every write to one task's own figures (lockProjectOfTask
 * below; time-logs.repository's logTime).
 */
export const projectOfTaskShared = (columns: readonly string[]) =>
  `select ${columns.map((column) => `p.${column}`).join(', ')}
   from tasks t join projects p on p.team_id = t.team_id and p.id = t.project_id
   where t.team_id = :teamId and t.id = :taskId and t.archived_at is null
   for share of p`;

/**
 * lockProject for a write to one task's own figures ('task-figures'), found by the task: in one
 * statement, the project of the non-archived task `taskId` is taken shared and the task is marked;
 * undefined when there is no such task. (A time log takes the same lock and mark within its own
 * single statement: time-logs.repository's logTime.)
 */
export async function lockProjectOfTask(db: Knex, teamId: string, taskId: string): Promise<ProjectRow | undefined> {
  const result = await prepared(
    db.raw(
      `with locked as (${projectOfTaskShared([...COLUMNS, 'team_id'])}),
       marked as (
         insert into stale_tasks (team_id, project_id, task_id, revision)
         select team_id, id, cast(:taskId as uuid), revision from locked
         returning 1
       )
       select ${COLUMNS.join(', ')} from locked`,
      { teamId, taskId },
    ),
    'lock_project_of_task',
  );
  return result.rows[0];
}

/**
 * The write lock of every project of the team, for a change to a member that shows in figures (its
 * name or avatar): taken in id order, then the projects the member takes part in are found and marked
 * (a mark per project, worked out into its tasks by the next refresh), so an assignment or time log
 * committed meanwhile is never missed (its write held its project's lock, shared or not).
 */
export async function lockTeamProjects(db: Knex, teamId: string, change: Extract<Invalidation, { kind: 'member' }>): Promise<void> {
  await db.raw(
    `update projects p set revision = p.revision + 1
     from (select id from projects where team_id = :teamId order by id for update) locked
     where p.team_id = :teamId and p.id = locked.id`,
    { teamId },
  );
  await recordInvalidation(db, teamId, 'team', change);
}

/** A project of the team, without a lock (writes take it with lockProject). */
export async function findProject(db: Knex, teamId: string, id: string): Promise<ProjectRow | undefined> {
  return prepared(db('projects').where({ team_id: teamId, id }).first(COLUMNS), 'find_project');
}

export async function listProjects(db: Knex, teamId: string): Promise<ProjectRow[]> {
  const sql = `select ${COLUMNS.join(', ')} from projects where team_id = :teamId order by name, id`;
  return (await preparedRaw<ProjectRow>(db, 'projects_list', sql, { teamId })).rows;
}

export async function updateProject(
  db: Knex,
  teamId: string,
  id: string,
  fields: Partial<{ name: string; currency: string; budget: string | null; time_zone: string }>,
): Promise<ProjectRow> {
  const [row] = await db('projects')
    .where({ team_id: teamId, id })
    .update({ ...fields, updated_at: db.fn.now() })
    .returning(COLUMNS);
  return row;
}

/** Whether any stored amount of the project has more decimals than `decimals` (blocks a currency change). */
export async function hasAmountsFinerThan(db: Knex, teamId: string, projectId: string, decimals: number): Promise<boolean> {
  const result = await db.raw(
    `select exists (
       select 1 from tasks where team_id = :teamId and project_id = :projectId and fixed_cost <> round(fixed_cost, :decimals)
       union all
       select 1 from project_rate_cards where team_id = :teamId and project_id = :projectId and hourly_rate <> round(hourly_rate, :decimals)
       union all
       select 1 from projects where team_id = :teamId and id = :projectId and budget <> round(budget, :decimals)
     ) as finer`,
    { teamId, projectId, decimals },
  );
  return Boolean(result.rows[0]?.finer);
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

export type RateCardEntry = { job_role_id: string; job_role_name: string; hourly_rate: string; effective_from: string };

/** The rate card in force on `date`: each role's latest entry on or before it, when that entry has a rate. */
export async function rateCardOn(db: Knex, teamId: string, projectId: string, date: string): Promise<RateCardEntry[]> {
  const result = await db.raw(
    `select r.job_role_id, jr.name as job_role_name, r.hourly_rate, r.effective_from::text as effective_from
     from (
       select distinct on (job_role_id) job_role_id, hourly_rate, effective_from from project_rate_cards
       where team_id = :teamId and project_id = :projectId and effective_from <= cast(:date as date)
       order by job_role_id, effective_from desc
     ) r
     join job_roles jr on jr.team_id = :teamId and jr.id = r.job_role_id
     where r.hourly_rate is not null
     order by jr.name, r.job_role_id`,
    { teamId, projectId, date },
  );
  return result.rows;
}

export type RateHistoryEntry = {
  job_role_id: string;
  job_role_name: string;
  hourly_rate: string | null;
  effective_from: string;
  written_at: Date;
  written_by: string | null;
};

/** Every entry of the project's rate card, by the day it takes effect, then role name. */
export async function rateCardHistory(db: Knex, teamId: string, projectId: string): Promise<RateHistoryEntry[]> {
  const result = await db.raw(
    `select c.job_role_id, jr.name as job_role_name, c.hourly_rate, c.effective_from::text as effective_from, c.written_at, c.written_by
     from project_rate_cards c join job_roles jr on jr.team_id = c.team_id and jr.id = c.job_role_id
     where c.team_id = :teamId and c.project_id = :projectId
     order by c.effective_from, jr.name, c.job_role_id`,
    { teamId, projectId },
  );
  return result.rows;
}

/** A dated entry of a project's rate card (rateEntries). */
export type RateEntryRow = { job_role_id: string; effective_from: string; hourly_rate: string | null };

/** Every dated entry of the project's rate card, by role and day. */
export async function rateEntries(db: Knex, teamId: string, projectId: string): Promise<RateEntryRow[]> {
  return db('project_rate_cards')
    .where({ team_id: teamId, project_id: projectId })
    .select('job_role_id', db.raw('effective_from::text as effective_from'), 'hourly_rate')
    .orderBy([{ column: 'job_role_id' }, { column: 'effective_from' }]);
}

/**
 * Writes the card in force from `effectiveFrom` on (CONTRACT section 5): entries dated on or after it
 * are replaced by one per listed role, and a role that had a rate before that day but is not listed
 * gets a null entry (no rate from that day). Earlier entries are history and stay.
 */
export async function writeRateCard(
  db: Knex,
  teamId: string,
  projectId: string,
  roles: readonly { job_role_id: string; hourly_rate: string | null }[],
  effectiveFrom: string,
  writtenBy: string,
): Promise<void> {
  await db('project_rate_cards')
    .where({ team_id: teamId, project_id: projectId })
    .andWhere('effective_from', '>=', effectiveFrom)
    .delete();
  const listed = new Set(roles.map((role) => role.job_role_id));
  const before = await db.raw(
    `select distinct on (job_role_id) job_role_id, hourly_rate from project_rate_cards
     where team_id = :teamId and project_id = :projectId and effective_from < cast(:effectiveFrom as date)
     order by job_role_id, effective_from desc`,
    { teamId, projectId, effectiveFrom },
  );
  const endings = (before.rows as { job_role_id: string; hourly_rate: string | null }[])
    .filter((entry) => entry.hourly_rate !== null && !listed.has(entry.job_role_id))
    .map((entry) => ({ job_role_id: entry.job_role_id, hourly_rate: null }));
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

/** The project's members (or one), with their role today (`today`, in the project's zone) and their role history. */
export async function listProjectMembers(
  db: Knex,
  teamId: string,
  projectId: string,
  today: string,
  memberId?: string,
): Promise<ProjectMemberEntry[]> {
  const result = await db.raw(
    `select pm.team_member_id, m.name,
            (select coalesce(json_agg(json_build_object('job_role_id', r.job_role_id, 'job_role_name', jr.name,
                                                        'effective_from', r.effective_from::text) order by r.effective_from), '[]')::text
             from project_member_roles r left join job_roles jr on jr.team_id = r.team_id and jr.id = r.job_role_id
             where r.team_id = pm.team_id and r.project_id = pm.project_id and r.team_member_id = pm.team_member_id) as roles_json
     from project_members pm
     join team_members m on m.team_id = pm.team_id and m.id = pm.team_member_id
     where pm.team_id = :teamId and pm.project_id = :projectId
       and (cast(:memberId as uuid) is null or pm.team_member_id = cast(:memberId as uuid))
     order by m.name, pm.team_member_id`,
    { teamId, projectId, memberId: memberId ?? null },
  );
  return (result.rows as { team_member_id: string; name: string; roles_json: string }[]).map((row) => {
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
