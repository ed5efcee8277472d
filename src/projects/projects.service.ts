import type { Knex } from 'knex';
import { z } from 'zod';
import { isUniqueViolation } from '../db/errors';
import { minorUnit, isSupportedCurrency, toDecimal } from '../finance/money';
import { AppError, conflict, fieldError, notFound, validationError } from '../http/errors';
import { checkAmountDecimals } from '../http/validate';
import { today } from '../clock';
import { existingJobRoleIds } from '../job-roles/job-roles.repository';
import { findTeamMember } from '../team-members/team-members.repository';
import * as repo from './projects.repository';
import { createProjectBody, rateCardBody, updateProjectBody } from './projects.schemas';

const DEFAULT_CURRENCY = 'USD';

function checkCurrency(currency: string): void {
  if (!isSupportedCurrency(currency)) throw fieldError('currency', `${currency} is not a supported ISO 4217 currency`);
}

const amountText = (value: number | null | undefined) => (value === null || value === undefined ? value : toDecimal(value).toFixed());

function duplicateName(name: string) {
  return (err: unknown): never => {
    if (isUniqueViolation(err)) throw conflict('DUPLICATE_NAME', `A project named "${name}" already exists`);
    throw err;
  };
}

/** A project of the team, or 404 PROJECT_NOT_FOUND. */
export async function getProject(db: Knex, teamId: string, id: string): Promise<repo.ProjectRow> {
  const project = await repo.findProject(db, teamId, id);
  if (!project) throw notFound('PROJECT_NOT_FOUND', 'Project');
  return project;
}

/**
 * Takes a project's write lock until commit and records what the write may change in its figures
 * (projects.repository's lockProject), or 404 PROJECT_NOT_FOUND.
 */
export async function lockProjectForWrite(db: Knex, teamId: string, id: string, change: repo.Invalidation): Promise<repo.ProjectRow> {
  const project = await repo.lockProject(db, teamId, id, change);
  if (!project) throw notFound('PROJECT_NOT_FOUND', 'Project');
  return project;
}

export function presentProject({ revision: _internal, reset_revision: _reset, ...project }: repo.ProjectRow) {
  return { ...project, budget: project.budget === null ? null : toDecimal(project.budget) };
}

async function presentRateCard(db: Knex, teamId: string, project: repo.ProjectRow) {
  const roles = await repo.currentRateCard(db, teamId, project.id, today());
  return {
    project_id: project.id,
    currency: project.currency,
    roles: roles.map((entry) => ({ ...entry, hourly_rate: toDecimal(entry.hourly_rate) })),
  };
}

export async function createProject(db: Knex, teamId: string, body: z.infer<typeof createProjectBody>) {
  const currency = body.currency ?? DEFAULT_CURRENCY;
  checkCurrency(currency);
  if (body.budget != null) checkAmountDecimals('budget', body.budget, currency);
  const project = await repo
    .insertProject(db, teamId, { name: body.name, currency, budget: amountText(body.budget) ?? null })
    .catch(duplicateName(body.name));
  return presentProject(project);
}

export async function updateProject(db: Knex, teamId: string, id: string, body: z.infer<typeof updateProjectBody>) {
  return db.transaction(async (trx) => {
    // A new currency changes every rounded cost.
    const project = await lockProjectForWrite(trx, teamId, id, body.currency !== undefined ? { kind: 'all' } : { kind: 'none' });
    const currency = body.currency ?? project.currency;
    if (body.currency !== undefined) checkCurrency(body.currency);
    if (body.budget != null) checkAmountDecimals('budget', body.budget, currency);
    if (currency !== project.currency && (await repo.hasAmountsFinerThan(trx, teamId, id, minorUnit(currency)))) {
      throw conflict('CONFLICT', `The project holds amounts with more decimals than ${currency} allows; change them first`);
    }
    const updated = await repo
      .updateProject(trx, teamId, id, { name: body.name, currency: body.currency, budget: amountText(body.budget) })
      .catch(duplicateName(body.name ?? project.name));
    return presentProject(updated);
  });
}

export async function listProjects(db: Knex, teamId: string) {
  return (await repo.listProjects(db, teamId)).map(presentProject);
}

export async function getRateCard(db: Knex, teamId: string, projectId: string) {
  return presentRateCard(db, teamId, await getProject(db, teamId, projectId));
}

export async function replaceRateCard(db: Knex, teamId: string, projectId: string, body: z.infer<typeof rateCardBody>) {
  return db.transaction(async (trx) => {
    const project = await lockProjectForWrite(trx, teamId, projectId, { kind: 'all' });
    const seen = new Set<string>();
    body.roles.forEach((entry, index) => {
      if (seen.has(entry.job_role_id)) throw fieldError(`roles.${index}.job_role_id`, 'appears more than once');
      seen.add(entry.job_role_id);
      checkAmountDecimals(`roles.${index}.hourly_rate`, entry.hourly_rate, project.currency);
    });
    const known = await existingJobRoleIds(trx, teamId, [...seen]);
    const unknown = body.roles.flatMap((entry, index) =>
      known.has(entry.job_role_id) ? [] : [{ path: `roles.${index}.job_role_id`, message: 'is not a job role of this team' }],
    );
    if (unknown.length) throw validationError('Unknown job roles in the rate card', unknown);
    await repo.replaceRateCard(
      trx,
      teamId,
      projectId,
      body.roles.map((entry) => ({ job_role_id: entry.job_role_id, hourly_rate: toDecimal(entry.hourly_rate).toFixed() })),
    );
    return presentRateCard(trx, teamId, project);
  });
}

export async function listProjectMembers(db: Knex, teamId: string, projectId: string) {
  await getProject(db, teamId, projectId);
  return repo.listProjectMembers(db, teamId, projectId);
}

export async function setProjectMember(db: Knex, teamId: string, projectId: string, memberId: string, jobRoleId: string | null) {
  return db.transaction(async (trx) => {
    // The member's role and rate in the project change in every task it takes part in.
    await lockProjectForWrite(trx, teamId, projectId, { kind: 'member', memberId });
    if (!(await findTeamMember(trx, teamId, memberId))) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Team member');
    if (jobRoleId && !(await existingJobRoleIds(trx, teamId, [jobRoleId])).has(jobRoleId)) {
      throw fieldError('job_role_id', 'is not a job role of this team');
    }
    const added = await repo.upsertProjectMember(trx, teamId, projectId, memberId, jobRoleId);
    const [entry] = await repo.listProjectMembers(trx, teamId, projectId, memberId);
    return { added, member: { project_id: projectId, ...entry } };
  });
}

export async function removeProjectMember(db: Knex, teamId: string, projectId: string, memberId: string) {
  return db.transaction(async (trx) => {
    // The project's lock serialises this with assignee changes, so no task gains the member meanwhile;
    // the tasks it logged time on lose its role and rate.
    await lockProjectForWrite(trx, teamId, projectId, { kind: 'member', memberId });
    const [entry] = await repo.listProjectMembers(trx, teamId, projectId, memberId);
    if (!entry) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Project member');
    const assigned = await repo.tasksAssignedTo(trx, teamId, projectId, memberId);
    if (assigned.length) {
      throw new AppError(409, 'CONFLICT', `The member is still assigned to tasks of this project: ${assigned.join(', ')}`);
    }
    await repo.deleteProjectMember(trx, teamId, projectId, memberId);
    return { project_id: projectId, ...entry };
  });
}
