import type { Knex } from 'knex';
import { prepared } from '../db/prepared';

export type ProjectRow = {
  id: string;
  name: string;
  currency: string;
  budget: string | null;
  created_at: Date;
  updated_at: Date;
  /** Bumped by every write to the project (findProject with a lock); not part of any response. */
  revision: number;
};

const COLUMNS = ['id', 'name', 'currency', 'budget', 'created_at', 'updated_at', 'revision'];

/** Rate-card rows all take effect from this date until dated rates are introduced. */
export const RATE_EFFECTIVE_SINCE_ALWAYS = '1970-01-01';

export async function insertProject(
  db: Knex,
  teamId: string,
  fields: { name: string; currency: string; budget: string | null },
): Promise<ProjectRow> {
  const [row] = await db('projects').insert({ team_id: teamId, ...fields }).returning(COLUMNS);
  return row;
}

/**
 * `lock` 'update': every write to a project (its own fields, its tasks and their figures, its rate card
 * and members) takes the project row until commit, by bumping its revision. So writes to one project are
 * serialised, the stored roll-ups, which sum whole subtrees, never miss a concurrent change
 * (finance/labor.ts), and a project list cached at one revision is known stale once a write commits.
 */
export async function findProject(db: Knex, teamId: string, id: string, lock: false | 'update' = false): Promise<ProjectRow | undefined> {
  if (lock === 'update') {
    const [row] = await prepared(
      db('projects').where({ team_id: teamId, id }).update({ revision: db.raw('revision + 1') }).returning(COLUMNS),
      'lock_project_for_write',
    );
    return row;
  }
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
 * A `rate (job_role_id, hourly_rate)` CTE with each role's rate in force today in the project's card
 * (the latest row on or before today), for raw queries binding :teamId and :projectId.
 */
export const RATES_IN_FORCE = `rate (job_role_id, hourly_rate) as (
       select distinct on (job_role_id) job_role_id, hourly_rate from project_rate_cards
       where team_id = :teamId and project_id = :projectId and effective_from <= current_date
       order by job_role_id, effective_from desc
     )`;

/** The rates in force today, one per job role. */
export async function currentRateCard(db: Knex, teamId: string, projectId: string): Promise<RateCardEntry[]> {
  const result = await db.raw(
    `with ${RATES_IN_FORCE}
     select r.job_role_id, jr.name as job_role_name, r.hourly_rate
     from rate r join job_roles jr on jr.team_id = :teamId and jr.id = r.job_role_id
     order by r.job_role_id`,
    { teamId, projectId },
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
