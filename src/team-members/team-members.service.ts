import type { Knex } from 'knex';
import { z } from 'zod';
import { isUniqueViolation } from '../db/errors';
import { conflict, notFound } from '../http/errors';
import { refreshTaskLabor } from '../finance/labor';
import { getProject } from '../projects/projects.service';
import { participatingTasksByProject } from '../tasks/tasks.repository';
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
  return db.transaction(async (trx) => {
    const before = await getTeamMember(trx, teamId, id);
    // Names and avatars are part of the stored breakdowns (and names order the estimate split), so a
    // change refreshes the tasks the member appears in, under their projects' locks (taken in id order).
    const shown = (body.name !== undefined && body.name !== before.name) || (body.avatar_url !== undefined && body.avatar_url !== before.avatar_url);
    const affected = shown ? await participatingTasksByProject(trx, teamId, id) : new Map<string, string[]>();
    const projects = [];
    for (const projectId of affected.keys()) projects.push(await getProject(trx, teamId, projectId, 'update'));
    const member = await repo.updateTeamMember(trx, teamId, id, body).catch(duplicateEmail);
    if (!member) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Team member');
    for (const project of projects) await refreshTaskLabor(trx, teamId, project, affected.get(project.id) ?? []);
    return member;
  });
}

export const listTeamMembers = repo.listTeamMembers;
