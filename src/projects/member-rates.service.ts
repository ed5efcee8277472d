import type { Knex } from 'knex';
import { todayIn } from '../clock';
import type { Actor } from '../auth/roles';
import { memberRatesEvent } from '../events/event-data';
import { recordEvent } from '../events/events.repository';
import { toDecimal } from '../finance/rules/money';
import { ResolvedRate, entryInForce, resolveRates, roleOn } from '../finance/rules/rate-resolution';
import { notFound } from '../http/errors';
import { checkAmountDecimals } from '../http/validate';
import * as repo from './member-rates.repository';
import type { ProjectRow } from './projects.repository';
import { getProject, lockProjectForWrite } from './projects.service';
import type { MemberRatesBody } from './member-rates.schemas';
import { writeTransaction } from '../finance/read-model/budget-watch';

/*
 * A project member's own rates (docs/finance-rules.md R22, R26): written as dated entries like the
 * rate card, and explained on a day (which rate holds, and why).
 */

const rateOrNull = (rate: string | null) => (rate === null ? null : toDecimal(rate));

const presentOverrides = (rows: readonly repo.MemberRateRow[]) =>
  rows.map((row) => ({
    hourly_rate: rateOrNull(row.hourly_rate),
    bill_rate: rateOrNull(row.bill_rate),
    effective_from: row.effective_from,
    written_at: row.written_at,
    written_by: row.written_by,
  }));

async function checkProjectMember(db: Knex, teamId: string, projectId: string, memberId: string): Promise<void> {
  if (!(await repo.isProjectMember(db, teamId, projectId, memberId))) throw notFound('TEAM_MEMBER_NOT_FOUND', 'Project member');
}

async function presentHistory(db: Knex, teamId: string, project: ProjectRow, memberId: string) {
  return {
    project_id: project.id,
    team_member_id: memberId,
    currency: project.currency,
    rate_unit: project.rate_unit,
    overrides: presentOverrides(await repo.memberRateHistory(db, teamId, project.id, memberId)),
  };
}

/**
 * PUT /projects/:id/members/:team_member_id/rates: the member's rates from `effective_from` on (default
 * today in the project's zone); a null rate defers to the role's, a rate left out keeps what the
 * member's own entry in force on that day had. Answers its override history.
 */
export async function setMemberRates(db: Knex, actor: Actor, projectId: string, memberId: string, body: MemberRatesBody) {
  const teamId = actor.teamId;
  return writeTransaction(db, async (trx) => {
    // Its logs from that day on and its share of its tasks' estimates may cost and earn otherwise.
    const project = await lockProjectForWrite(trx, teamId, projectId, { kind: 'member', memberId, from: body.effective_from ?? null });
    await checkProjectMember(trx, teamId, projectId, memberId);
    if (body.hourly_rate != null) checkAmountDecimals('hourly_rate', body.hourly_rate, project.currency);
    if (body.bill_rate != null) checkAmountDecimals('bill_rate', body.bill_rate, project.currency);
    const effectiveFrom = body.effective_from ?? todayIn(project.time_zone);
    const inForce = entryInForce(await repo.memberRateHistory(trx, teamId, projectId, memberId), effectiveFrom);
    const rate = (given: number | null | undefined, kept: string | null | undefined) =>
      given === undefined ? (kept ?? null) : given === null ? null : toDecimal(given).toFixed();
    const rates = { hourly_rate: rate(body.hourly_rate, inForce?.hourly_rate), bill_rate: rate(body.bill_rate, inForce?.bill_rate) };
    await repo.writeMemberRates(trx, teamId, projectId, memberId, rates, effectiveFrom, actor.tokenName);
    await recordEvent(trx, teamId, 'member_rates.changed', memberRatesEvent(projectId, memberId, { effective_from: effectiveFrom, ...rates }));
    return presentHistory(trx, teamId, project, memberId);
  });
}

const presentResolved = (rate: ResolvedRate) => ({ ...rate, amount: toDecimal(rate.amount) });

/** GET /projects/:id/members/:team_member_id/rates: the member's rates on `date` (default today in the project's zone), and why. */
export async function explainMemberRates(db: Knex, teamId: string, projectId: string, memberId: string, date?: string) {
  const project = await getProject(db, teamId, projectId);
  await checkProjectMember(db, teamId, projectId, memberId);
  const day = date ?? todayIn(project.time_zone);
  const [sources, overrides] = await Promise.all([
    repo.rateSourcesOf(db, teamId, projectId, memberId),
    repo.memberRateHistory(db, teamId, projectId, memberId),
  ]);
  const role = roleOn(sources.roles, day);
  const roleId = role?.job_role_id ?? null;
  const card = roleId ? sources.card.filter((entry) => entry.job_role_id === roleId) : [];
  const rates = resolveRates(overrides, card, day);
  const roleName = sources.roles.find((entry) => entry.job_role_id === roleId)?.job_role_name;
  return {
    project_id: project.id,
    team_member_id: memberId,
    date: day,
    rate_unit: project.rate_unit,
    job_role: roleId && roleName ? { id: roleId, name: roleName } : null,
    hourly_rate: presentResolved(rates.hourly_rate),
    bill_rate: presentResolved(rates.bill_rate),
    overrides: presentOverrides(overrides),
  };
}
