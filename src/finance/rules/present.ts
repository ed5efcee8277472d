import { CostLine, MemberFigures, MemberInput, TaskTotals, UNASSIGNED_ROLE, compareMembers, groupByRole } from './calculator';
import { Decimal, ZERO } from './money';
import { SUMMARY_FIGURES, SummaryFigureName } from './figures';

/*
 * The contract's shapes of the calculator's figures (docs/api.md, Finance routes): the task summary, the
 * breakdown's member entries and role groups, and a list row's assignees. The stored parts of a
 * breakdown (labor.ts) and the ones computed at read time come from these same functions.
 */

export type TaskIdentity = { id: string; name: string; project_id: string; billable: boolean };

/** A task's summary figures (figures.ts; or a project's totals), as the contract names them. */
export function presentTotals(totals: TaskTotals): Record<SummaryFigureName, Decimal> {
  return Object.fromEntries(SUMMARY_FIGURES.map((figure) => [figure.name, totals[figure.key]])) as Record<SummaryFigureName, Decimal>;
}

export function presentSummary(task: TaskIdentity, currency: string, totals: TaskTotals) {
  return { id: task.id, name: task.name, project_id: task.project_id, billable: task.billable, currency, ...presentTotals(totals) };
}

/** A cost line (docs/finance-rules.md R15.3). */
function presentCostLine(line: CostLine) {
  return {
    job_role: line.jobRole,
    hourly_rate: line.hourlyRate,
    logged_hours: line.loggedHours,
    actual_cost: line.actualCost,
    first_day: line.firstDay,
    last_day: line.lastDay,
  };
}

function presentMember(member: MemberFigures) {
  return {
    team_member_id: member.teamMemberId,
    name: member.name,
    avatar_url: member.avatarUrl,
    hourly_rate: member.hourlyRate,
    estimated_hours: member.estimatedHours,
    logged_hours: member.loggedHours,
    estimated_cost: member.estimatedCost,
    actual_cost: member.actualCost,
    cost_lines: member.costLines.map(presentCostLine),
  };
}

/** `body.grouped_members` of a breakdown. */
export function presentGroups(members: readonly MemberFigures[]) {
  return groupByRole(members).map((group) => ({
    jobRole: group.jobRole,
    estimated_hours: group.estimatedHours,
    logged_hours: group.loggedHours,
    estimated_cost: group.estimatedCost,
    actual_cost: group.actualCost,
    members: group.members.map(presentMember),
  }));
}

/** `body.members` of a breakdown. */
export function presentMembers(members: readonly MemberFigures[]) {
  return members.map((member) => ({ ...presentMember(member), job_title_name: member.jobRole }));
}

/** A list row's `assignees`: the task's assignees with their role and rate in the project, in rule 7's order. */
export function presentAssignees(members: readonly MemberInput[]) {
  return members
    .filter((member) => member.isAssignee)
    .sort(compareMembers)
    .map((member) => ({
      team_member_id: member.teamMemberId,
      name: member.name,
      avatar_url: member.avatarUrl,
      job_title_name: member.jobRole ?? UNASSIGNED_ROLE,
      hourly_rate: member.hourlyRate ?? ZERO,
    }));
}
