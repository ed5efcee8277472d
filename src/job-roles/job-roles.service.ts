import type { Knex } from 'knex';
import { UNASSIGNED_ROLE } from '../finance/rules/calculator';
import { isUniqueViolation } from '../db/errors';
import { conflict, fieldError } from '../http/errors';
import * as repo from './job-roles.repository';

export async function createJobRole(db: Knex, teamId: string, name: string) {
  // "Unassigned" is the breakdown's group for members without a role; a real role of that name would merge into it.
  if (name.toLowerCase() === UNASSIGNED_ROLE.toLowerCase()) {
    throw fieldError('name', `"${UNASSIGNED_ROLE}" is reserved for members without a job role`);
  }
  try {
    return await repo.insertJobRole(db, teamId, name);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('DUPLICATE_NAME', `A job role named "${name}" already exists`);
    throw err;
  }
}

export const listJobRoles = repo.listJobRoles;
