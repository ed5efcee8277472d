import type { Knex } from 'knex';
import { z } from 'zod';
import { isUniqueViolation } from '../db/errors';
import { conflict, notFound } from '../http/errors';
import { lockTeamProjects } from '../finance/read-model/freshness';
import * as repo from './team-members.repository';
import { createTeamMemberBody, updateTeamMemberBody } from './team-members.schemas';
import { writeTransaction } from '../finance/read-model/budget-watch';

function duplicateEmail(err: unknown): never {
  if (isUniqueViolation(err)) throw conflict('CONFLICT', 'A team member with this email already exists');
  throw err;
}

export async function createTeamMember(db: Knex, teamId: string, body: z.infer<typeof createTeamMemberBody>) {
  return repo.insertTeamMember(db, teamId, body).catch(duplicateEmail);
}

export async function getTeamMember(db: Knex, teamId: string, id: string) {
  const member = await repo.findTeamMember(db, teamId, id);
  if (!member) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Team member');
  return member;
}

export async function updateTeamMember(db: Knex, teamId: string, id: string, body: z.infer<typeof updateTeamMemberBody>) {
  return writeTransaction(db, async (trx) => {
    const before = await getTeamMember(trx, teamId, id);
    // Names and avatars show in figures (and names order the estimate split): every project's lock
    // first, then the tasks the member takes part in are marked, so none gained meanwhile is missed.
    const shown = (body.name !== undefined && body.name !== before.name) || (body.avatar_url !== undefined && body.avatar_url !== before.avatar_url);
    if (shown) await lockTeamProjects(trx, teamId, { kind: 'member', memberId: id, from: 'infinity' });
    const member = await repo.updateTeamMember(trx, teamId, id, body).catch(duplicateEmail);
    if (!member) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Team member');
    return member;
  });
}

export const listTeamMembers = repo.listTeamMembers;
