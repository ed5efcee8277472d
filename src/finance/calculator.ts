import { groupBy } from '../group-by';
import { Decimal, ZERO, hoursFromSeconds, roundMoney, splitHours, sum } from './money';

/*
 * The finance rules of CONTRACT section 3, as pure functions over exact decimals. No I/O here: the
 * service hands in rows it read, and gets figures back that only need serialising.
 */

/**
 * The version of these rules. Stored figures are stamped with it (finance/figures.ts): bump it with any
 * change to what the calculator computes, and every project's figures are recomputed by themselves.
 */
export const CALCULATOR_VERSION = 1;

export const UNASSIGNED_ROLE = 'Unassigned';

export type MemberInput = {
  teamMemberId: string;
  name: string;
  avatarUrl: string | null;
  /** The member's job role in the task's project, or null when it has none. */
  jobRole: string | null;
  /** The role's rate in the project's rate card, or null when there is none. */
  hourlyRate: Decimal | null;
  isAssignee: boolean;
  loggedSeconds: number;
};

export type TaskInput = {
  estimatedHours: Decimal;
  fixedCost: Decimal;
  members: readonly MemberInput[];
};

export type MemberFigures = {
  teamMemberId: string;
  name: string;
  avatarUrl: string | null;
  jobRole: string;
  hourlyRate: Decimal;
  estimatedHours: Decimal;
  loggedHours: Decimal;
  estimatedCost: Decimal;
  actualCost: Decimal;
};

export type TaskTotals = {
  estimatedHours: Decimal;
  loggedHours: Decimal;
  estimatedLaborCost: Decimal;
  actualLaborCost: Decimal;
  fixedCost: Decimal;
  totalEstimatedCost: Decimal;
  totalActualCost: Decimal;
};

export type RoleGroup = {
  jobRole: string;
  estimatedHours: Decimal;
  loggedHours: Decimal;
  estimatedCost: Decimal;
  actualCost: Decimal;
  members: MemberFigures[];
};

export type TaskFinance = { totals: TaskTotals; members: MemberFigures[] };

/**
 * Unicode code point order, independent of locale: the order of PostgreSQL's "C" collation on UTF-8,
 * which the project-list SQL uses for the same rule. (JavaScript's `<` compares UTF-16 code units,
 * which differs for characters beyond U+FFFF.)
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Rule 7: members by name, then team_member_id. */
export function compareMembers(a: { name: string; teamMemberId: string }, b: { name: string; teamMemberId: string }) {
  return compareText(a.name, b.name) || compareText(a.teamMemberId, b.teamMemberId);
}

/** Rules 1-6 and 8 for one task. */
export function computeTaskFinance(task: TaskInput, currency: string): TaskFinance {
  const members = task.members.filter((m) => m.isAssignee || m.loggedSeconds > 0).sort(compareMembers);
  const assignees = members.filter((m) => m.isAssignee);
  const shares = splitHours(task.estimatedHours, assignees.length);
  const estimateOf = new Map(assignees.map((member, index) => [member.teamMemberId, shares[index] ?? ZERO]));

  const figures = members.map((member): MemberFigures => {
    const hourlyRate = member.hourlyRate ?? ZERO;
    const estimatedHours = estimateOf.get(member.teamMemberId) ?? ZERO;
    const loggedHours = hoursFromSeconds(member.loggedSeconds);
    return {
      teamMemberId: member.teamMemberId,
      name: member.name,
      avatarUrl: member.avatarUrl,
      jobRole: member.jobRole ?? UNASSIGNED_ROLE,
      hourlyRate,
      estimatedHours,
      loggedHours,
      estimatedCost: roundMoney(estimatedHours.times(hourlyRate), currency),
      actualCost: roundMoney(loggedHours.times(hourlyRate), currency),
    };
  });

  return { members: figures, totals: totalsOf(task.estimatedHours, task.fixedCost, figures) };
}

function totalsOf(estimatedHours: Decimal, fixedCost: Decimal, members: readonly MemberFigures[]): TaskTotals {
  return taskTotals({
    estimatedHours,
    loggedHours: sum(members.map((m) => m.loggedHours)),
    estimatedLaborCost: sum(members.map((m) => m.estimatedCost)),
    actualLaborCost: sum(members.map((m) => m.actualCost)),
    fixedCost,
  });
}

/** Rule 6: the fixed cost is added to both labor costs. */
export function taskTotals(labor: Omit<TaskTotals, 'totalEstimatedCost' | 'totalActualCost'>): TaskTotals {
  return {
    ...labor,
    totalEstimatedCost: labor.estimatedLaborCost.plus(labor.fixedCost),
    totalActualCost: labor.actualLaborCost.plus(labor.fixedCost),
  };
}

/** Rule 10: variance is the total estimated cost minus the total actual cost (negative: over estimate). */
export function variance(totals: Pick<TaskTotals, 'totalEstimatedCost' | 'totalActualCost'>): Decimal {
  return totals.totalEstimatedCost.minus(totals.totalActualCost);
}

/** Adds task totals field by field (subtree breakdowns, project rows, project totals), in one pass. */
export function addTotals(all: readonly TaskTotals[]): TaskTotals {
  let estimatedHours = ZERO;
  let loggedHours = ZERO;
  let estimatedLaborCost = ZERO;
  let actualLaborCost = ZERO;
  let fixedCost = ZERO;
  let totalEstimatedCost = ZERO;
  let totalActualCost = ZERO;
  for (const t of all) {
    estimatedHours = estimatedHours.plus(t.estimatedHours);
    loggedHours = loggedHours.plus(t.loggedHours);
    estimatedLaborCost = estimatedLaborCost.plus(t.estimatedLaborCost);
    actualLaborCost = actualLaborCost.plus(t.actualLaborCost);
    fixedCost = fixedCost.plus(t.fixedCost);
    totalEstimatedCost = totalEstimatedCost.plus(t.totalEstimatedCost);
    totalActualCost = totalActualCost.plus(t.totalActualCost);
  }
  return { estimatedHours, loggedHours, estimatedLaborCost, actualLaborCost, fixedCost, totalEstimatedCost, totalActualCost };
}

/** A member's figures over several tasks are the sums of that member's figures on each task. */
export function mergeMembers(lists: readonly (readonly MemberFigures[])[]): MemberFigures[] {
  const merged = new Map<string, MemberFigures>();
  for (const member of lists.flat()) {
    const seen = merged.get(member.teamMemberId);
    if (!seen) {
      merged.set(member.teamMemberId, { ...member });
      continue;
    }
    seen.estimatedHours = seen.estimatedHours.plus(member.estimatedHours);
    seen.loggedHours = seen.loggedHours.plus(member.loggedHours);
    seen.estimatedCost = seen.estimatedCost.plus(member.estimatedCost);
    seen.actualCost = seen.actualCost.plus(member.actualCost);
  }
  return [...merged.values()].sort(compareMembers);
}

/** Merges several tasks' finances into one (a task and its descendants). */
export function combineTaskFinances(finances: readonly TaskFinance[]): TaskFinance {
  return {
    totals: addTotals(finances.map((f) => f.totals)),
    members: mergeMembers(finances.map((f) => f.members)),
  };
}

/** Role groups ordered by name with "Unassigned" last; each group's figures sum its members'. */
export function groupByRole(members: readonly MemberFigures[]): RoleGroup[] {
  const byRole = groupBy([...members].sort(compareMembers), (member) => member.jobRole);
  const rank = (role: string) => (role === UNASSIGNED_ROLE ? 1 : 0);
  return [...byRole.keys()]
    .sort((a, b) => rank(a) - rank(b) || compareText(a, b))
    .map((jobRole) => {
      const group = byRole.get(jobRole) ?? [];
      return {
        jobRole,
        estimatedHours: sum(group.map((m) => m.estimatedHours)),
        loggedHours: sum(group.map((m) => m.loggedHours)),
        estimatedCost: sum(group.map((m) => m.estimatedCost)),
        actualCost: sum(group.map((m) => m.actualCost)),
        members: group,
      };
    });
}
