import type { Knex } from 'knex';
import type { DatedRateEntry, DatedRole } from '../finance/rules/rate-resolution';

/*
 * A project member's own rates (project_member_rates, migration 022): a dated history like the rate
 * card's (docs/finance-rules.md R26), and what the explanation of a member's rates reads.
 */

/** A member's override entry as its history shows it. */
export type MemberRateRow = DatedRateEntry & { written_at: Date; written_by: string | null };

/** Whether the team member is a member of the project (it has a row in project_members). */
export async function isProjectMember(db: Knex, teamId: string, projectId: string, memberId: string): Promise<boolean> {
  const row = await db('project_members').where({ team_id: teamId, project_id: projectId, team_member_id: memberId }).first('team_member_id');
  return row !== undefined;
}

/** Every override entry of a member in a project, by the day it takes effect. */
export async function memberRateHistory(db: Knex, teamId: string, projectId: string, memberId: string): Promise<MemberRateRow[]> {
  return db('project_member_rates')
    .where({ team_id: teamId, project_id: projectId, team_member_id: memberId })
    .select(db.raw('effective_from::text as effective_from'), 'hourly_rate', 'bill_rate', 'written_at', 'written_by')
    .orderBy('effective_from');
}

/**
 * Writes a member's rates in force from `effectiveFrom` on: its entries dated on or after that day are
 * replaced by this one, earlier ones are history and stay. The caller holds the project's write lock.
 */
export async function writeMemberRates(
  db: Knex,
  teamId: string,
  projectId: string,
  memberId: string,
  rates: { hourly_rate: string | null; bill_rate: string | null },
  effectiveFrom: string,
  writtenBy: string,
): Promise<void> {
  const key = { team_id: teamId, project_id: projectId, team_member_id: memberId };
  await db('project_member_rates').where(key).andWhere('effective_from', '>=', effectiveFrom).delete();
  await db('project_member_rates').insert({ ...key, ...rates, effective_from: effectiveFrom, written_by: writtenBy });
}

/** What decides a member's rates on any day: its dated roles (with their names), and the card's entries of those roles. */
export type RateSources = {
  roles: (DatedRole & { job_role_name: string | null })[];
  card: (DatedRateEntry & { job_role_id: string })[];
};

/** A member's dated roles in a project and the project card's entries of every role it ever had. */
export async function rateSourcesOf(db: Knex, teamId: string, projectId: string, memberId: string): Promise<RateSources> {
  const roles = await db('project_member_roles as r')
    .leftJoin('job_roles as jr', function joinRole() {
      this.on('jr.team_id', 'r.team_id').andOn('jr.id', 'r.job_role_id');
    })
    .where({ 'r.team_id': teamId, 'r.project_id': projectId, 'r.team_member_id': memberId })
    .select('r.job_role_id', 'jr.name as job_role_name', db.raw('r.effective_from::text as effective_from'))
    .orderBy('r.effective_from');
  const roleIds = roles.flatMap((role: DatedRole) => (role.job_role_id ? [role.job_role_id] : []));
  const card = roleIds.length
    ? await db('project_rate_cards')
        .where({ team_id: teamId, project_id: projectId })
        .whereIn('job_role_id', roleIds)
        .select('job_role_id', db.raw('effective_from::text as effective_from'), 'hourly_rate', 'bill_rate')
    : [];
  return { roles, card };
}
