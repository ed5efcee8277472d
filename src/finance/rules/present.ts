import { CostLine, MemberFigures, MemberInput, PerDay, RateWarning, TaskTotals, UNASSIGNED_ROLE, compareMembers, groupByRole } from './calculator';
import { Decimal, ZERO, hourlyOfDayRate } from './money';
import { AMOUNT_FIGURES, AmountFigure, SUMMARY_FIGURES, SummaryFigureName } from './figures';
import { JsonText, toJson } from '../../json';

/*
 * The contract's shapes of the calculator's figures (docs/api.md, Finance routes): the task summary, the
 * breakdown's member entries and role groups, and a list row's assignees. The stored parts of a
 * breakdown (labor.ts) and the ones computed at read time come from these same functions.
 */

export type TaskIdentity = { id: string; name: string; project_id: string; billable: boolean };

/** A task's summary figures (figures.ts; or a project's totals), as the contract names them: a flag as a boolean. */
export function presentTotals(totals: TaskTotals): Record<SummaryFigureName, Decimal | boolean> {
  return Object.fromEntries(
    SUMMARY_FIGURES.map((figure) => [figure.name, figure.unit === 'flag' ? totals[figure.key].gt(0) : totals[figure.key]]),
  ) as Record<SummaryFigureName, Decimal | boolean>;
}

/** A summary's amounts and hours only (a rate preview's totals). */
export function presentAmounts(totals: TaskTotals): Record<AmountFigure['name'], Decimal> {
  return Object.fromEntries(AMOUNT_FIGURES.map((figure) => [figure.name, totals[figure.key]])) as Record<AmountFigure['name'], Decimal>;
}

/**
 * Rates as shown (docs/finance-rules.md R21): in an "hour" project `hourly_rate` and `bill_rate` as they
 * are; in a "day" project the entered rates as `day_rate` and `day_bill_rate`, and the hourly ones
 * divided by the hours of a day, rounded to 4 decimals (for display only).
 */
function presentRates(cost: Decimal, bill: Decimal, perDay: PerDay) {
  if (perDay === null) return { hourly_rate: cost, bill_rate: bill };
  return { hourly_rate: hourlyOfDayRate(cost, perDay), day_rate: cost, bill_rate: hourlyOfDayRate(bill, perDay), day_bill_rate: bill };
}

/** A breakdown's `warnings` (R25). */
export function presentWarnings(warnings: readonly RateWarning[]) {
  return warnings.map((warning) => ({ code: warning.code, team_member_id: warning.teamMemberId, name: warning.name }));
}

export function presentSummary(task: TaskIdentity, currency: string, totals: TaskTotals) {
  return { id: task.id, name: task.name, project_id: task.project_id, billable: task.billable, currency, ...presentTotals(totals) };
}

/** A cost line (docs/finance-rules.md R15.3, R22). */
function presentCostLine(line: CostLine, perDay: PerDay) {
  return {
    job_role: line.jobRole,
    ...presentRates(line.hourlyRate, line.billRate, perDay),
    logged_hours: line.loggedHours,
    actual_cost: line.actualCost,
    actual_revenue: line.actualRevenue,
    first_day: line.firstDay,
    last_day: line.lastDay,
  };
}

function presentMember(member: MemberFigures) {
  return {
    team_member_id: member.teamMemberId,
    name: member.name,
    avatar_url: member.avatarUrl,
    ...presentRates(member.hourlyRate, member.billRate, member.perDay),
    estimated_hours: member.estimatedHours,
    logged_hours: member.loggedHours,
    estimated_cost: member.estimatedCost,
    actual_cost: member.actualCost,
    estimated_revenue: member.estimatedRevenue,
    actual_revenue: member.actualRevenue,
    cost_rate_source: member.costRateSource,
    bill_rate_source: member.billRateSource,
    cost_lines: member.costLines.map((line) => presentCostLine(line, member.perDay)),
  };
}

/**
 * A breakdown's `members` and `grouped_members` as JSON text. The two carry the same member entries
 * (`members` adds each one's `job_title_name`), so each entry is rendered once and its text used in
 * both: rendering is the larger part of a breakdown computed on the fly.
 */
export function renderBreakdownMembers(members: readonly MemberFigures[]): { members: string; groupedMembers: string } {
  const rendered = new Map<MemberFigures, string>();
  const entry = (member: MemberFigures) => {
    let text = rendered.get(member);
    if (text === undefined) {
      text = toJson(presentMember(member));
      rendered.set(member, text);
    }
    return text;
  };
  const groups = groupByRole(members).map((group) =>
    toJson({
      jobRole: group.jobRole,
      estimated_hours: group.estimatedHours,
      logged_hours: group.loggedHours,
      estimated_cost: group.estimatedCost,
      actual_cost: group.actualCost,
      estimated_revenue: group.estimatedRevenue,
      actual_revenue: group.actualRevenue,
      members: new JsonText(`[${group.members.map(entry).join(',')}]`),
    }),
  );
  // An entry's object text without its closing brace, then the field `members` adds last.
  const flat = members.map((member) => `${entry(member).slice(0, -1)},"job_title_name":${JSON.stringify(member.jobRole)}}`);
  return { members: `[${flat.join(',')}]`, groupedMembers: `[${groups.join(',')}]` };
}

/**
 * A list row's `assignees`: the task's assignees with their role and cost rate in the project (resolved
 * today, R22; in a "day" project per hour as shown, R21), in rule 7's order.
 */
export function presentAssignees(members: readonly MemberInput[], perDay: PerDay = null) {
  return members
    .filter((member) => member.isAssignee)
    .sort(compareMembers)
    .map((member) => ({
      team_member_id: member.teamMemberId,
      name: member.name,
      avatar_url: member.avatarUrl,
      job_title_name: member.jobRole ?? UNASSIGNED_ROLE,
      hourly_rate: perDay === null ? (member.hourlyRate ?? ZERO) : hourlyOfDayRate(member.hourlyRate ?? ZERO, perDay),
    }));
}
