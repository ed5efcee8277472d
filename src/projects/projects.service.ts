import type { Knex } from 'knex';
import { z } from 'zod';
import { isUniqueViolation } from '../db/errors';
import { minorUnit, isSupportedCurrency, toDecimal } from '../finance/rules/money';
import { AppError, conflict, fieldError, notFound, validationError } from '../http/errors';
import { FIRST_PAGE, PageRequest } from '../http/paging';
import { checkAmountDecimals } from '../http/validate';
import { todayIn } from '../clock';
import { entryInForce } from '../finance/rules/rate-resolution';
import type { Actor } from '../auth/roles';
import { existingJobRoleIds } from '../job-roles/job-roles.repository';
import { findTeamMember } from '../team-members/team-members.repository';
import { memberRoleEvent, projectChangedEvent, rateCardEvent } from '../events/event-data';
import { recordEvent } from '../events/events.repository';
import * as repo from './projects.repository';
import { Invalidation, lockProject, recordMemberChange, recordRateChange, stampNewProject } from '../finance/read-model/freshness';
import { hasBudget, markBudget, writeTransaction } from '../finance/read-model/budget-watch';
import { RateCardBody, createProjectBody, projectMemberBody, updateProjectBody } from './projects.schemas';

const DEFAULT_CURRENCY = 'USD';
const DEFAULT_TIME_ZONE = 'UTC';
const DEFAULT_RATE_UNIT = 'hour';
const DEFAULT_HOURS_PER_DAY = 8;

/** Whether this runtime's Intl knows the zone (docs/finance-rules.md R16.1). */
function intlKnows(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** A time zone both the runtime (dates of "today") and PostgreSQL (dates of time logs) know by that exact name. */
async function checkTimeZone(db: Knex, timeZone: string): Promise<void> {
  if (!intlKnows(timeZone) || !(await repo.isKnownTimeZone(db, timeZone))) {
    throw fieldError('time_zone', `${timeZone} is not an IANA time zone this service knows, e.g. UTC or Europe/Paris`);
  }
}

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
 * (finance/read-model/freshness.ts's lockProject), or 404 PROJECT_NOT_FOUND.
 */
export async function lockProjectForWrite(db: Knex, teamId: string, id: string, change: Invalidation): Promise<repo.ProjectRow> {
  const project = await lockProject(db, teamId, id, change);
  if (!project) throw notFound('PROJECT_NOT_FOUND', 'Project');
  return project;
}

export function presentProject({ revision: _internal, reset_revision: _reset, ...project }: repo.ProjectRow) {
  return {
    ...project,
    budget: project.budget === null ? null : toDecimal(project.budget),
    hours_per_day: toDecimal(project.hours_per_day),
    hours_budget: project.hours_budget == null ? null : toDecimal(project.hours_budget),
  };
}

const rateOrNull = (rate: string | null) => (rate === null ? null : toDecimal(rate));

/** The budget fields of a body as stored: hours as exact text, alert percentages ascending. */
function budgetFields(body: { hours_budget?: number | null; budget_period?: 'total' | 'month'; budget_alerts?: number[] }) {
  return {
    hours_budget: amountText(body.hours_budget),
    budget_period: body.budget_period,
    budget_alerts: body.budget_alerts === undefined ? undefined : [...body.budget_alerts].sort((a, b) => a - b),
  };
}

/** Drops undefined fields (knex would write them as defaults on an insert). */
const defined = <T extends object>(fields: T) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;

/** The card in force on `date` (default today in the project's zone). */
async function presentRateCard(db: Knex, teamId: string, project: repo.ProjectRow, date: string = todayIn(project.time_zone)) {
  const roles = await repo.rateCardOn(db, teamId, project.id, date);
  return {
    project_id: project.id,
    currency: project.currency,
    date,
    roles: roles.map((entry) => ({ ...entry, hourly_rate: rateOrNull(entry.hourly_rate), bill_rate: rateOrNull(entry.bill_rate) })),
  };
}

export async function createProject(db: Knex, teamId: string, body: z.infer<typeof createProjectBody>) {
  const currency = body.currency ?? DEFAULT_CURRENCY;
  checkCurrency(currency);
  if (body.budget != null) checkAmountDecimals('budget', body.budget, currency);
  const timeZone = body.time_zone ?? DEFAULT_TIME_ZONE;
  await checkTimeZone(db, timeZone);
  const project = await writeTransaction(db, async (trx) => {
    const row = await repo
      .insertProject(trx, teamId, {
        name: body.name,
        currency,
        budget: amountText(body.budget) ?? null,
        time_zone: timeZone,
        rate_unit: body.rate_unit ?? DEFAULT_RATE_UNIT,
        hours_per_day: toDecimal(body.hours_per_day ?? DEFAULT_HOURS_PER_DAY).toFixed(),
        ...defined(budgetFields(body)),
      })
      .catch(duplicateName(body.name));
    await stampNewProject(trx, teamId, row);
    await recordEvent(trx, teamId, 'project.changed', projectChangedEvent(undefined, row));
    return row;
  });
  return presentProject(project);
}

/** Whether the body changes how the project's rates are read (its unit or day length): only while it has no rate entry. */
function changesRateUnit(project: repo.ProjectRow, body: z.infer<typeof updateProjectBody>): boolean {
  return (
    (body.rate_unit !== undefined && body.rate_unit !== project.rate_unit) ||
    (body.hours_per_day !== undefined && !toDecimal(body.hours_per_day).eq(toDecimal(project.hours_per_day)))
  );
}

export async function updateProject(db: Knex, teamId: string, id: string, body: z.infer<typeof updateProjectBody>) {
  return writeTransaction(db, async (trx) => {
    // A new currency changes every rounded cost; a new time zone every log's day and "today"; a new rate
    // unit or day length how every member entry shows its rates (there are no rates to re-price).
    const everyTask = body.currency !== undefined || body.time_zone !== undefined || body.rate_unit !== undefined || body.hours_per_day !== undefined;
    const project = await lockProjectForWrite(trx, teamId, id, everyTask ? { kind: 'all' } : { kind: 'none' });
    // Invalid input is a 400 before any conflict is a 409.
    const currency = body.currency ?? project.currency;
    if (body.currency !== undefined) checkCurrency(body.currency);
    if (body.time_zone !== undefined) await checkTimeZone(trx, body.time_zone);
    if (body.budget != null) checkAmountDecimals('budget', body.budget, currency);
    if (changesRateUnit(project, body) && (await repo.hasRateEntries(trx, teamId, id))) {
      throw conflict('CONFLICT', 'rate_unit and hours_per_day may change only while the project has no rate entries (rate card or member overrides)');
    }
    if (currency !== project.currency && (await repo.hasAmountsFinerThan(trx, teamId, id, minorUnit(currency)))) {
      throw conflict('CONFLICT', `The project holds amounts with more decimals than ${currency} allows; change them first`);
    }
    const updated = await repo
      .updateProject(trx, teamId, id, {
        name: body.name,
        currency: body.currency,
        budget: amountText(body.budget),
        time_zone: body.time_zone,
        rate_unit: body.rate_unit,
        hours_per_day: body.hours_per_day === undefined ? undefined : toDecimal(body.hours_per_day).toFixed(),
        ...budgetFields(body),
      })
      .catch(duplicateName(body.name ?? project.name));
    // A budget or alert change is a write like any other: a threshold spent already reaches counts as crossed.
    if (hasBudget(project) || hasBudget(updated)) await markBudget(trx, teamId, id);
    if (body.time_zone !== undefined && body.time_zone !== project.time_zone) await repo.rebuildDayTotals(trx, teamId, id);
    await recordEvent(trx, teamId, 'project.changed', projectChangedEvent(project, updated));
    return presentProject(updated);
  });
}

export async function listProjects(db: Knex, teamId: string, page: PageRequest) {
  const { rows, next } = await repo.listProjects(db, teamId, page);
  return { rows: rows.map(presentProject), next };
}

export async function getRateCard(db: Knex, teamId: string, projectId: string, date?: string) {
  return presentRateCard(db, teamId, await getProject(db, teamId, projectId), date);
}

/** A page of the rate card's history: the project's fields, and a page of its entries (`next`: the cursor of the next one). */
export async function rateCardHistory(db: Knex, teamId: string, projectId: string, page: PageRequest) {
  const project = await getProject(db, teamId, projectId);
  const entries = await repo.rateCardHistory(db, teamId, projectId, page);
  return {
    body: {
      project_id: project.id,
      currency: project.currency,
      entries: entries.rows.map((entry) => ({ ...entry, hourly_rate: rateOrNull(entry.hourly_rate), bill_rate: rateOrNull(entry.bill_rate) })),
    },
    next: entries.next,
  };
}

type RateEntry = repo.RateEntryRow;

/**
 * A role's rates from `from` on, as the days its cost or bill rate changes and the pair from each (a
 * missing or null rate is 0).
 */
function ratesFrom(entries: readonly RateEntry[], role: string, from: string): string {
  const own = entries.filter((entry) => entry.job_role_id === role);
  // None and 0 cost alike, but only none is a missing rate (docs/finance-rules.md R25): told apart.
  const rate = (value: string | null | undefined) => (value === null || value === undefined ? 'none' : toDecimal(value).toFixed());
  const rateOf = (entry: RateEntry | undefined) => `${rate(entry?.hourly_rate)}/${rate(entry?.bill_rate)}`;
  const steps: [string, string][] = [[from, rateOf(own.filter((entry) => entry.effective_from <= from).at(-1))]];
  for (const entry of own.filter((e) => e.effective_from > from)) {
    const rate = rateOf(entry);
    if (rate !== steps.at(-1)?.[1]) steps.push([entry.effective_from, rate]);
  }
  return JSON.stringify(steps);
}

/** The roles whose cost or bill rate on some day from `from` on differs between two cards. */
function changedRoles(before: readonly RateEntry[], after: readonly RateEntry[], from: string): string[] {
  const roles = new Set([...before, ...after].map((entry) => entry.job_role_id));
  return [...roles].filter((role) => ratesFrom(before, role, from) !== ratesFrom(after, role, from));
}

/** A rate of a body as exact text (null: none). */
const rateText = (rate: number | null) => (rate === null ? null : toDecimal(rate).toFixed());

/**
 * Validates a rate card against the project and writes it from its effective day on (the write of
 * PUT /rate-card and of its preview, which rolls it back); answers that day, the entries written and
 * the roles whose rate on some day from it on changed. A listed role without `bill_rate` keeps the
 * bill rate it had on that day (a client that knows only cost rates never clears bill rates). The
 * caller decides the locking: the PUT holds the project's write lock, the preview does not.
 */
export async function applyRateCard(
  trx: Knex,
  actor: Actor,
  project: repo.ProjectRow,
  body: RateCardBody,
): Promise<{ effectiveFrom: string; changedRoles: string[]; written: repo.RateEntryRow[] }> {
  const seen = new Set<string>();
  body.roles.forEach((entry, index) => {
    if (seen.has(entry.job_role_id)) throw fieldError(`roles.${index}.job_role_id`, 'appears more than once');
    seen.add(entry.job_role_id);
    if (entry.hourly_rate !== null) checkAmountDecimals(`roles.${index}.hourly_rate`, entry.hourly_rate, project.currency);
    if (entry.bill_rate != null) checkAmountDecimals(`roles.${index}.bill_rate`, entry.bill_rate, project.currency);
  });
  const known = await existingJobRoleIds(trx, actor.teamId, [...seen]);
  const unknown = body.roles.flatMap((entry, index) =>
    known.has(entry.job_role_id) ? [] : [{ path: `roles.${index}.job_role_id`, message: 'is not a job role of this team' }],
  );
  if (unknown.length) throw validationError('Unknown job roles in the rate card', unknown);
  const effectiveFrom = body.effective_from ?? todayIn(project.time_zone);
  const before = await repo.rateEntries(trx, actor.teamId, project.id);
  const written = body.roles.map((entry) => ({
    job_role_id: entry.job_role_id,
    effective_from: effectiveFrom,
    hourly_rate: rateText(entry.hourly_rate),
    bill_rate:
      entry.bill_rate === undefined
        ? (entryInForce(before.filter((old) => old.job_role_id === entry.job_role_id), effectiveFrom)?.bill_rate ?? null)
        : rateText(entry.bill_rate),
  }));
  await repo.writeRateCard(trx, actor.teamId, project.id, written, effectiveFrom, actor.tokenName);
  const after = await repo.rateEntries(trx, actor.teamId, project.id);
  return { effectiveFrom, changedRoles: changedRoles(before, after, effectiveFrom), written };
}

export async function replaceRateCard(db: Knex, actor: Actor, projectId: string, body: RateCardBody) {
  return writeTransaction(db, async (trx) => {
    const project = await lockProjectForWrite(trx, actor.teamId, projectId, { kind: 'rates' });
    const { effectiveFrom, changedRoles: roles, written } = await applyRateCard(trx, actor, project, body);
    await recordRateChange(trx, actor.teamId, projectId, roles, effectiveFrom);
    await recordEvent(trx, actor.teamId, 'rate_card.changed', rateCardEvent(projectId, effectiveFrom, written, roles));
    return presentRateCard(trx, actor.teamId, project, effectiveFrom);
  });
}

export async function listProjectMembers(db: Knex, teamId: string, projectId: string, page: PageRequest) {
  const project = await getProject(db, teamId, projectId);
  return repo.listProjectMembers(db, teamId, projectId, todayIn(project.time_zone), page);
}

export async function setProjectMember(db: Knex, actor: Actor, projectId: string, memberId: string, body: z.infer<typeof projectMemberBody>) {
  const teamId = actor.teamId;
  return writeTransaction(db, async (trx) => {
    // The member's role and rate in the project change from the entry's day on (today by default).
    const project = await lockProjectForWrite(trx, teamId, projectId, { kind: 'member', memberId, from: body.effective_from ?? null });
    if (!(await findTeamMember(trx, teamId, memberId))) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Team member');
    const jobRoleId = body.job_role_id;
    if (jobRoleId && !(await existingJobRoleIds(trx, teamId, [jobRoleId])).has(jobRoleId)) {
      throw fieldError('job_role_id', 'is not a job role of this team');
    }
    const today = todayIn(project.time_zone);
    const added = await repo.setProjectMemberRole(trx, teamId, projectId, memberId, jobRoleId, body.effective_from ?? today, actor.tokenName);
    // New to the project: its role counts from the beginning, also for time it logged before joining.
    if (added) await recordMemberChange(trx, teamId, projectId, memberId, repo.BEGINNING);
    await recordEvent(trx, teamId, 'member_role.changed', memberRoleEvent(projectId, memberId, { job_role_id: jobRoleId, effective_from: body.effective_from ?? today, added }));
    const [entry] = (await repo.listProjectMembers(trx, teamId, projectId, today, FIRST_PAGE, memberId)).rows;
    return { added, member: { project_id: projectId, ...entry } };
  });
}

export async function removeProjectMember(db: Knex, teamId: string, projectId: string, memberId: string) {
  return writeTransaction(db, async (trx) => {
    // The project's lock serialises this with assignee changes, so no task gains the member meanwhile;
    // the tasks it logged time on lose its role and rate, on every day.
    const project = await lockProjectForWrite(trx, teamId, projectId, { kind: 'member', memberId, from: '-infinity' });
    const [entry] = (await repo.listProjectMembers(trx, teamId, projectId, todayIn(project.time_zone), FIRST_PAGE, memberId)).rows;
    if (!entry) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Project member');
    const assigned = await repo.tasksAssignedTo(trx, teamId, projectId, memberId);
    if (assigned.length) {
      throw new AppError(409, 'CONFLICT', `The member is still assigned to tasks of this project: ${assigned.join(', ')}`);
    }
    await repo.deleteProjectMember(trx, teamId, projectId, memberId);
    await recordEvent(trx, teamId, 'member_role.changed', memberRoleEvent(projectId, memberId, { removed: true }));
    return { project_id: projectId, ...entry };
  });
}
