import type { Knex } from 'knex';
import { today } from '../clock';
import { prepared } from '../db/prepared';
import { CALCULATOR_VERSION } from '../finance/calculator';

export type ProjectRow = {
  id: string;
  name: string;
  currency: string;
  budget: string | null;
  created_at: Date;
  updated_at: Date;
  /** Bumped by every write to the project (lockProject); not part of any response. */
  revision: number;
  /** The revision of the last write that changed every task's inputs (see lockProject). */
  reset_revision: number;
};

const COLUMNS = ['id', 'name', 'currency', 'budget', 'created_at', 'updated_at', 'revision', 'reset_revision'];

/** Rate-card rows all take effect from this date until dated rates are introduced. */
export const RATE_EFFECTIVE_SINCE_ALWAYS = '1970-01-01';

export async function insertProject(
  db: Knex,
  teamId: string,
  fields: { name: string; currency: string; budget: string | null },
): Promise<ProjectRow> {
  const [row] = await db('projects').insert({ team_id: teamId, ...fields }).returning(COLUMNS);
  // No tasks yet, so nothing to compute: its (empty) figures are current today (see finance/figures.ts).
  await db('project_figures').insert({
    team_id: teamId,
    project_id: row.id,
    revision: row.revision,
    day: today(),
    calculator_version: CALCULATOR_VERSION,
  });
  return row;
}

/**
 * What a write may change in a project's derived figures, recorded by lockProject in the write's own
 * transaction (src/finance/figures.ts reads it back):
 *   - 'tasks': those tasks' own inputs or place (each is marked, with the parent it has now, so a move
 *     or an archive also recomputes the old parent's roll-ups);
 *   - 'member': the inputs of every task the member takes part in (assigned or with logged time);
 *   - 'all': the inputs of every task (the rate card, the currency);
 *   - 'none': nothing a stored figure depends on, or only tasks that have no stored figures yet (a new
 *     task: a refresh computes every task without a stored row).
 */
export type Invalidation =
  | { kind: 'none' }
  | { kind: 'all' }
  | { kind: 'tasks'; taskIds: readonly string[] }
  | { kind: 'member'; memberId: string };

/**
 * Marks tasks stale at their project's current revision: the tasks whose ids `ids` (SQL) selects, of
 * the project (or of the team). Read after the locks, so no concurrent change is missed.
 */
async function markStale(db: Knex, teamId: string, projectId: string | 'team', ids: string, bindings: Record<string, string>) {
  await db.raw(
    `insert into stale_tasks (team_id, project_id, task_id, revision)
     select t.team_id, t.project_id, t.id, p.revision
     from tasks t join projects p on p.team_id = t.team_id and p.id = t.project_id
     where t.team_id = :teamId and t.id in (${ids})
       and (cast(:projectId as uuid) is null or t.project_id = cast(:projectId as uuid))
     on conflict do nothing`,
    { teamId, projectId: projectId === 'team' ? null : projectId, ...bindings },
  );
}

/** The tasks and their parents now (a move or an archive changes the old parent's roll-ups). */
const TASKS_AND_PARENTS = `select unnest(string_to_array(:ids, ',')::uuid[])
  union
  select c.parent_task_id from tasks c
  where c.team_id = :teamId and c.id = any(string_to_array(:ids, ',')::uuid[]) and c.parent_task_id is not null`;

/** The tasks a member takes part in: assigned, or with logged time (both looked up by member). */
const TASKS_OF_MEMBER = `select a.task_id from task_assignees a where a.team_id = :teamId and a.team_member_id = :memberId
  union
  select x.task_id from task_member_time x where x.team_id = :teamId and x.team_member_id = :memberId and x.total_seconds > 0`;

async function recordInvalidation(db: Knex, teamId: string, projectId: string | 'team', change: Invalidation): Promise<void> {
  if (change.kind === 'tasks' && change.taskIds.length > 0) {
    await markStale(db, teamId, projectId, TASKS_AND_PARENTS, { ids: change.taskIds.join(',') });
  } else if (change.kind === 'member') {
    await markStale(db, teamId, projectId, TASKS_OF_MEMBER, { memberId: change.memberId });
  }
}

/**
 * The one helper that takes a project's write lock: every write to a project (its own fields, its
 * tasks and their figures, its rate card and members) calls it first. It bumps the project's revision
 * (so writes to one project are serialised, and every stored or cached figure stamped with an older
 * revision is known out of date) and records what the write may change (`change`), in the write's
 * own transaction.
 */
export async function lockProject(db: Knex, teamId: string, id: string, change: Invalidation): Promise<ProjectRow | undefined> {
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
 * The write lock of every project of the team, for a change to a member that shows in figures (its
 * name or avatar): taken in id order, then the member's tasks are found and marked, so an assignment
 * or time log committed meanwhile is never missed (its write held its project's lock).
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
  return db('projects').where({ team_id: teamId }).select(COLUMNS).orderBy([{ column: 'name' }, { column: 'id' }]);
}

export async function updateProject(
  db: Knex,
  teamId: string,
  id: string,
  fields: Partial<{ name: string; currency: string; budget: string | null }>,
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

export type RateCardEntry = { job_role_id: string; job_role_name: string; hourly_rate: string };

/**
 * A `rate (job_role_id, hourly_rate)` CTE with each role's rate in force on :today in the project's
 * card (the latest row on or before it), for raw queries binding :teamId, :projectId and :today (the
 * service's clock, src/clock.ts, never the database server's current_date).
 */
export const RATES_IN_FORCE = `rate (job_role_id, hourly_rate) as (
       select distinct on (job_role_id) job_role_id, hourly_rate from project_rate_cards
       where team_id = :teamId and project_id = :projectId and effective_from <= cast(:today as date)
       order by job_role_id, effective_from desc
     )`;

/** The rates in force on `today`, one per job role. */
export async function currentRateCard(db: Knex, teamId: string, projectId: string, today: string): Promise<RateCardEntry[]> {
  const result = await db.raw(
    `with ${RATES_IN_FORCE}
     select r.job_role_id, jr.name as job_role_name, r.hourly_rate
     from rate r join job_roles jr on jr.team_id = :teamId and jr.id = r.job_role_id
     order by r.job_role_id`,
    { teamId, projectId, today },
  );
  return result.rows;
}

export async function replaceRateCard(
  db: Knex,
  teamId: string,
  projectId: string,
  roles: readonly { job_role_id: string; hourly_rate: string }[],
): Promise<void> {
  await db('project_rate_cards').where({ team_id: teamId, project_id: projectId }).delete();
  if (roles.length === 0) return;
  await db('project_rate_cards').insert(
    roles.map((r) => ({ team_id: teamId, project_id: projectId, effective_from: RATE_EFFECTIVE_SINCE_ALWAYS, ...r })),
  );
}

export type ProjectMemberEntry = {
  team_member_id: string;
  name: string;
  job_role_id: string | null;
  job_role_name: string | null;
};

export async function listProjectMembers(db: Knex, teamId: string, projectId: string, memberId?: string): Promise<ProjectMemberEntry[]> {
  const query = db('project_members as pm')
    .join('team_members as m', function joinMember() {
      this.on('m.team_id', 'pm.team_id').andOn('m.id', 'pm.team_member_id');
    })
    .leftJoin('job_roles as jr', function joinRole() {
      this.on('jr.team_id', 'pm.team_id').andOn('jr.id', 'pm.job_role_id');
    })
    .where({ 'pm.team_id': teamId, 'pm.project_id': projectId })
    .select('pm.team_member_id', 'm.name', 'pm.job_role_id', 'jr.name as job_role_name')
    .orderBy([{ column: 'm.name' }, { column: 'pm.team_member_id' }]);
  return memberId ? query.andWhere('pm.team_member_id', memberId) : query;
}

/** Adds the member to the project or changes its role; true when it was added. */
export async function upsertProjectMember(
  db: Knex,
  teamId: string,
  projectId: string,
  memberId: string,
  jobRoleId: string | null,
): Promise<boolean> {
  const result = await db.raw(
    `insert into project_members (team_id, project_id, team_member_id, job_role_id)
     values (?, ?, ?, ?)
     on conflict (team_id, project_id, team_member_id) do update set job_role_id = excluded.job_role_id
     returning (xmax = 0) as inserted`,
    [teamId, projectId, memberId, jobRoleId],
  );
  return Boolean(result.rows[0]?.inserted);
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
