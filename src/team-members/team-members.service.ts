import type { Knex } from 'knex';
import { z } from 'zod';
import { isUniqueViolation } from '../db/errors';
import { conflict, notFound } from '../http/errors';
import * as repo from './team-members.repository';
import { createTeamMemberBody, updateTeamMemberBody } from './team-members.schemas';

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
  const member = await repo.updateTeamMember(db, teamId, id, body).catch(duplicateEmail);
  if (!member) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Team member');
  return member;
}

export const listTeamMembers = repo.listTeamMembers;
