import { groupBy, groupByInTurns } from '../../group-by';
import { TURN_MS, turns } from '../../turns';
import { FigureKey, SUMMARY_FIGURES, SummaryFigureKey } from './figures';
import type { RateSource } from './rate-resolution';
import { Decimal, ZERO, amountOfMinorUnits, costInMinorUnits, hoursOfHundredths, hundredthsOfHour, splitHundredths, sum } from './money';

/*
 * The finance rules of docs/finance-rules.md, as pure functions over exact decimals. No I/O here: the
 * service hands in rows it read, and gets figures back that only need serialising.
 */

/**
 * The version of these rules. Stored figures are stamped with it (finance/read-model/freshness.ts): bump it with any
 * change to what the calculator computes, and every project's figures are recomputed by themselves.
 * 3: each task's totals and variance are stored too (migrations/20261125_006_stored_totals.ts).
 * 4: a member's first role counts from the beginning of time, before 1970-01-01 too (a log's day west
 *    of UTC; inputs/participants.ts's DATED_PERIODS), so figures stored under 3 may cost such a log as
 *    "Unassigned".
 * 5: revenue and margin, bill rates, member overrides, day rates and missing rates (docs/finance-rules.md
 *    R20-R25; migrations/20261128_024_revenue_figures.ts): every task's new figures computed.
 */
export const CALCULATOR_VERSION = 5;

export const UNASSIGNED_ROLE = 'Unassigned';

/** Where a member's rate on a day comes from (docs/finance-rules.md R22), as the explanation says it too. */
export type { RateSource } from './rate-resolution';

/**
 * A member's logged seconds on a task on the days one (role, cost rate, bill rate) was in force
 * (docs/finance-rules.md R15.3, R22), over the days asked for.
 */
export type CostLineInput = {
  /** The member's job role on those days, or null when it had none. */
  jobRole: string | null;
  /** The cost rate resolved on those days (0 without one); per day in a "day" project. */
  hourlyRate: Decimal;
  /** The bill rate resolved on those days (0 without one); per day in a "day" project. */
  billRate: Decimal;
  /** Whether the cost rate resolved to none on some of those days; the same for the bill rate. */
  costMissing: boolean;
  billMissing: boolean;
  seconds: number;
  /** The first and last day (YYYY-MM-DD, in the project's time zone) with logged time in the line. */
  firstDay: string;
  lastDay: string;
};

export type MemberInput = {
  teamMemberId: string;
  name: string;
  avatarUrl: string | null;
  /** The member's job role in the task's project today, or null when it has none. */
  jobRole: string | null;
  /** The cost rate resolved today (R22: the member's own, else its role's), or null when there is none. */
  hourlyRate: Decimal | null;
  /** The bill rate resolved today, or null when there is none. */
  billRate: Decimal | null;
  costRateSource: RateSource;
  billRateSource: RateSource;
  isAssignee: boolean;
  /** Whether the member ever logged time on the task (rule 1), whatever range the lines cover. */
  hasLoggedTime: boolean;
  costLines: readonly CostLineInput[];
};

/** A cost line's figures (rule 4): its hours rounded, then costed (and billed) at its rates. */
export type CostLine = {
  jobRole: string;
  hourlyRate: Decimal;
  billRate: Decimal;
  loggedHours: Decimal;
  actualCost: Decimal;
  actualRevenue: Decimal;
  costMissing: boolean;
  billMissing: boolean;
  firstDay: string;
  lastDay: string;
};

/** How a project prices (docs/finance-rules.md R21): hours of a day when its rates are per day, else null. */
export type PerDay = Decimal | null;

export type TaskInput = {
  estimatedHours: Decimal;
  fixedCost: Decimal;
  members: readonly MemberInput[];
  /** Only billable tasks earn (R23). */
  billable: boolean;
  /** Hours of a day in a "day" project (rates per day), null in an "hour" project. */
  perDay: PerDay;
  /** Whether the project has a bill rate entry (R25: only then is a missing bill rate said). */
  bills: boolean;
};

export type MemberFigures = {
  teamMemberId: string;
  name: string;
  avatarUrl: string | null;
  jobRole: string;
  hourlyRate: Decimal;
  billRate: Decimal;
  costRateSource: RateSource;
  billRateSource: RateSource;
  /** Hours of a day when the rates are per day (a "day" project), else null: how the rates are shown. */
  perDay: PerDay;
  estimatedHours: Decimal;
  loggedHours: Decimal;
  estimatedCost: Decimal;
  actualCost: Decimal;
  estimatedRevenue: Decimal;
  actualRevenue: Decimal;
  /** Whether its cost rate (bill rate: on a billable task of a project that bills) resolves to none on a day that counts (R25). */
  missingCostRate: boolean;
  missingBillRate: boolean;
  costLines: CostLine[];
};

/** A breakdown's warning (docs/finance-rules.md R25). */
export type RateWarning = { code: 'MISSING_COST_RATE' | 'MISSING_BILL_RATE'; teamMemberId: string; name: string };

/** A task's summary figures (figures.ts), in some exact kind of number, by the calculator's names. */
export type Figures<N> = Record<SummaryFigureKey, N>;

export type TaskTotals = Figures<Decimal>;

const SUMMARY_KEYS: readonly SummaryFigureKey[] = SUMMARY_FIGURES.map((figure) => figure.key);

/** A task's figures in whole ten-thousandths (money.ts's tenThousandthsOf): thousands of tasks' added and compared cheaply. */
export type ScaledTotals = Figures<bigint>;

export type RoleGroup = {
  jobRole: string;
  estimatedHours: Decimal;
  loggedHours: Decimal;
  estimatedCost: Decimal;
  actualCost: Decimal;
  estimatedRevenue: Decimal;
  actualRevenue: Decimal;
  members: MemberFigures[];
};

export type TaskFinance = { totals: TaskTotals; members: MemberFigures[] };

/**
 * has_missing_rates of a task's own figures (R25), a small count: 1 when a rate is missing on a logged
 * day, plus 2 when one is missing today for an assignee's estimate (so a re-costed estimate keeps the
 * logged days' part). Summed over subtrees like every figure; answered as a boolean (more than 0).
 */
export const MISSING_ON_LOGS = 1;
export const MISSING_ON_ESTIMATE = 2;

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

/** Cost lines in order: by first day, then role (code points), then cost rate, then bill rate. */
function compareLines(a: CostLine, b: CostLine): number {
  return (
    compareText(a.firstDay, b.firstDay) || compareText(a.jobRole, b.jobRole) || a.hourlyRate.comparedTo(b.hourlyRate) || a.billRate.comparedTo(b.billRate)
  );
}

/**
 * Rule 4 (section 3b) and R21-R23: each line's hours rounded to 2 decimals, its cost the rounded hours
 * times its cost rate (divided by the hours of a day in a "day" project, one rounding), its revenue
 * the same with its bill rate on a billable task, else 0.
 */
function costLinesOf(lines: readonly CostLineInput[], currency: string, billable: boolean, perDay: PerDay): CostLine[] {
  return lines
    .filter((line) => line.seconds > 0)
    .map((line) => {
      const hundredths = hundredthsOfHour(line.seconds);
      return {
        jobRole: line.jobRole ?? UNASSIGNED_ROLE,
        hourlyRate: line.hourlyRate,
        billRate: line.billRate,
        loggedHours: hoursOfHundredths(hundredths),
        actualCost: amountOfMinorUnits(costInMinorUnits(hundredths, line.hourlyRate, currency, perDay), currency),
        actualRevenue: billable ? amountOfMinorUnits(costInMinorUnits(hundredths, line.billRate, currency, perDay), currency) : ZERO,
        costMissing: line.costMissing,
        billMissing: line.billMissing,
        firstDay: line.firstDay,
        lastDay: line.lastDay,
      };
    })
    .sort(compareLines);
}

/**
 * Rules 2, 3 and 7: the task's estimate split among its assignees (in rule 7's order), each share in
 * hours and costed at the member's rate today; by member id.
 */
function estimatesOf(task: EstimatedTask, currency: string) {
  return new Map(
    estimateShares(task, currency).map(({ member, hundredths, cost, revenue }) => [
      member.teamMemberId,
      {
        estimatedHours: hoursOfHundredths(hundredths),
        estimatedCost: amountOfMinorUnits(cost, currency),
        estimatedRevenue: amountOfMinorUnits(revenue, currency),
      },
    ]),
  );
}

/** What an estimate is costed from. */
type EstimatedTask = Pick<TaskInput, 'estimatedHours' | 'members' | 'perDay'> & Partial<Pick<TaskInput, 'billable'>>;

/**
 * estimatesOf's shares as whole numbers: each assignee's hundredths of an hour, their cost and (on a
 * billable task) their revenue in minor units, at today's rates (per day in a "day" project).
 */
function estimateShares(task: EstimatedTask, currency: string) {
  const assignees = task.members.filter((m) => m.isAssignee).sort(compareMembers);
  const shares = splitHundredths(task.estimatedHours, assignees.length);
  return assignees.map((member, index) => {
    const hundredths = shares[index] ?? 0n;
    return {
      member,
      hundredths,
      cost: costInMinorUnits(hundredths, member.hourlyRate ?? ZERO, currency, task.perDay),
      revenue: task.billable ? costInMinorUnits(hundredths, member.billRate ?? ZERO, currency, task.perDay) : 0n,
    };
  });
}

/** Rules 2, 3, 7 and 6: what a task's estimate costs (its assignees' shares at their rates today), in minor units. */
export function estimateInMinorUnits(task: Pick<TaskInput, 'estimatedHours' | 'members' | 'perDay'>, currency: string): bigint {
  let total = 0n;
  for (const share of estimateShares(task, currency)) total += share.cost;
  return total;
}

/** Whether a rate missing today makes a warning (R25): the cost rate always, the bill rate on a billable task of a project that bills. */
const billRateCounts = (task: Pick<TaskInput, 'billable' | 'bills'>) => task.billable && task.bills;

/** Rules 1-6 and 8 for one task, with section 3b's cost lines and today's rates and roles. */
export function computeTaskFinance(task: TaskInput, currency: string): TaskFinance {
  const members = task.members.filter((m) => m.isAssignee || m.hasLoggedTime).sort(compareMembers);
  const estimates = estimatesOf({ ...task, members }, currency);
  const bills = billRateCounts(task);
  let missing = 0;

  const figures = members.map((member): MemberFigures => {
    const costLines = costLinesOf(member.costLines, currency, task.billable, task.perDay);
    const estimate = estimates.get(member.teamMemberId);
    const estimated = estimate !== undefined && estimate.estimatedHours.gt(0);
    const costOnLogs = costLines.some((line) => line.costMissing);
    const billOnLogs = bills && costLines.some((line) => line.billMissing);
    const costToday = estimated && member.costRateSource === 'none';
    const billToday = estimated && bills && member.billRateSource === 'none';
    if (costOnLogs || billOnLogs) missing |= MISSING_ON_LOGS;
    if (costToday || billToday) missing |= MISSING_ON_ESTIMATE;
    return {
      teamMemberId: member.teamMemberId,
      name: member.name,
      avatarUrl: member.avatarUrl,
      jobRole: member.jobRole ?? UNASSIGNED_ROLE,
      hourlyRate: member.hourlyRate ?? ZERO,
      billRate: member.billRate ?? ZERO,
      costRateSource: member.costRateSource,
      billRateSource: member.billRateSource,
      perDay: task.perDay,
      estimatedHours: estimate?.estimatedHours ?? ZERO,
      loggedHours: sum(costLines.map((line) => line.loggedHours)),
      estimatedCost: estimate?.estimatedCost ?? ZERO,
      actualCost: sum(costLines.map((line) => line.actualCost)),
      estimatedRevenue: estimate?.estimatedRevenue ?? ZERO,
      actualRevenue: sum(costLines.map((line) => line.actualRevenue)),
      missingCostRate: costOnLogs || costToday,
      missingBillRate: billOnLogs || billToday,
      costLines,
    };
  });

  return { members: figures, totals: totalsOf(task.estimatedHours, task.fixedCost, figures, missing) };
}

/** R25: a breakdown's warnings, for each member in rule 7's order its missing cost rate, then its missing bill rate. */
export function warningsOf(members: readonly MemberFigures[]): RateWarning[] {
  const warnings: RateWarning[] = [];
  for (const member of [...members].sort(compareMembers)) {
    if (member.missingCostRate) warnings.push({ code: 'MISSING_COST_RATE', teamMemberId: member.teamMemberId, name: member.name });
    if (member.missingBillRate) warnings.push({ code: 'MISSING_BILL_RATE', teamMemberId: member.teamMemberId, name: member.name });
  }
  return warnings;
}

/**
 * A task's totals when only what its estimate costs has changed (its assignees' names, which order
 * the split, or their roles or rates today), not its logged time nor the roles and rates of its
 * logged days: its logged hours and actual labor cost as computeTaskFinance last computed them
 * (`actual`), its estimate costed again from its assignees (`task.members`; rules 2, 3 and 7), and
 * rule 6. Equal to computeTaskFinance's totals on the same inputs.
 */
export function totalsWithEstimateOf(
  task: TaskInput,
  actual: Pick<TaskTotals, 'loggedHours' | 'actualLaborCost' | 'actualRevenue' | 'missingRates'>,
  currency: string,
): TaskTotals {
  let cost = 0n;
  let revenue = 0n;
  let missing = actual.missingRates.toNumber() & MISSING_ON_LOGS;
  const bills = billRateCounts(task);
  for (const share of estimateShares(task, currency)) {
    cost += share.cost;
    revenue += share.revenue;
    if (share.hundredths > 0n && (share.member.costRateSource === 'none' || (bills && share.member.billRateSource === 'none'))) missing |= MISSING_ON_ESTIMATE;
  }
  return taskTotals({
    estimatedHours: task.estimatedHours,
    loggedHours: actual.loggedHours,
    estimatedLaborCost: amountOfMinorUnits(cost, currency),
    actualLaborCost: actual.actualLaborCost,
    fixedCost: task.fixedCost,
    estimatedRevenue: amountOfMinorUnits(revenue, currency),
    actualRevenue: actual.actualRevenue,
    missingRates: new Decimal(missing),
  });
}

/** A member's logged seconds on a task at one role and rate (a cost line, its days left out). */
export type ChangedLine = Pick<CostLineInput, 'jobRole' | 'hourlyRate' | 'seconds'>;

/** Some members' cost lines on a task before and after a change. */
export type LinesChange = { before: readonly ChangedLine[]; after: readonly ChangedLine[] };

/**
 * What a change of some of a task's members' cost lines (a change of rates from a day on: the lines
 * of the other members are the same before and after) changes its logged hours and actual labor cost
 * by: what the changed members' lines give after it less what they gave before (rule 6 sums the
 * members, section 3b rule 4 a member's lines), in hundredths of an hour and minor units (the lines'
 * own rounding). Added to the figures computeTaskFinance computed before the change, it gives what it
 * computes after it.
 */
export function linesChangeDelta(changes: readonly LinesChange[], currency: string, perDay: PerDay = null): { hundredths: bigint; minorUnits: bigint } {
  let hundredths = 0n;
  let minorUnits = 0n;
  const count = (lines: readonly ChangedLine[], sign: 1 | -1) => {
    for (const line of lines) {
      if (line.seconds <= 0) continue; // no cost line (costLinesOf)
      const hours = hundredthsOfHour(line.seconds);
      const cost = costInMinorUnits(hours, line.hourlyRate, currency, perDay);
      if (sign > 0) {
        hundredths += hours;
        minorUnits += cost;
      } else {
        hundredths -= hours;
        minorUnits -= cost;
      }
    }
  };
  // A line before and one after of the same role, rate and seconds count the same: both left out.
  const same = (a: ChangedLine, b: ChangedLine) =>
    a.jobRole === b.jobRole && a.seconds === b.seconds && (a.hourlyRate === b.hourlyRate || a.hourlyRate.equals(b.hourlyRate));
  for (const change of changes) {
    const changedBefore: ChangedLine[] = [];
    const changedAfter = [...change.after];
    for (const line of change.before) {
      const twin = changedAfter.findIndex((other) => same(line, other));
      if (twin >= 0) changedAfter.splice(twin, 1);
      else changedBefore.push(line);
    }
    count(changedBefore, -1);
    count(changedAfter, 1);
  }
  return { hundredths, minorUnits };
}

function totalsOf(estimatedHours: Decimal, fixedCost: Decimal, members: readonly MemberFigures[], missing: number): TaskTotals {
  return taskTotals({
    estimatedHours,
    loggedHours: sum(members.map((m) => m.loggedHours)),
    estimatedLaborCost: sum(members.map((m) => m.estimatedCost)),
    actualLaborCost: sum(members.map((m) => m.actualCost)),
    fixedCost,
    estimatedRevenue: sum(members.map((m) => m.estimatedRevenue)),
    actualRevenue: sum(members.map((m) => m.actualRevenue)),
    missingRates: new Decimal(missing),
  });
}

/** The figures of task totals derived from the others: rule 6's totals and R24's margins. */
type Derived = 'totalEstimatedCost' | 'totalActualCost' | 'estimatedMargin' | 'actualMargin';

/**
 * Rule 6: the fixed cost is added to both labor costs; R24: each margin is the revenue less the total
 * cost (`add` and `subtract` of two numbers of the kind at hand).
 */
function withTotals<N>(labor: Omit<Figures<N>, Derived>, add: (a: N, b: N) => N, subtract: (a: N, b: N) => N): Figures<N> {
  const totalEstimatedCost = add(labor.estimatedLaborCost, labor.fixedCost);
  const totalActualCost = add(labor.actualLaborCost, labor.fixedCost);
  return {
    ...labor,
    totalEstimatedCost,
    totalActualCost,
    estimatedMargin: subtract(labor.estimatedRevenue, totalEstimatedCost),
    actualMargin: subtract(labor.actualRevenue, totalActualCost),
  };
}

export function taskTotals(labor: Omit<TaskTotals, Derived>): TaskTotals {
  return withTotals(labor, (a, b) => a.plus(b), (a, b) => a.minus(b));
}

/** taskTotals in whole ten-thousandths. */
export function scaledTaskTotals(labor: Omit<ScaledTotals, Derived>): ScaledTotals {
  return withTotals(labor, (a, b) => a + b, (a, b) => a - b);
}

/** Rule 10: variance is the total estimated cost minus the total actual cost (negative: over estimate). */
export function variance(totals: Pick<TaskTotals, 'totalEstimatedCost' | 'totalActualCost'>): Decimal {
  return totals.totalEstimatedCost.minus(totals.totalActualCost);
}

/** Adds task totals field by field (subtree breakdowns, project rows, project totals), in one pass. */
export function addTotals(all: readonly TaskTotals[]): TaskTotals {
  const sums = Object.fromEntries(SUMMARY_KEYS.map((key) => [key, ZERO])) as TaskTotals;
  for (const t of all) for (const key of SUMMARY_KEYS) sums[key] = sums[key].plus(t[key]);
  return sums;
}

/** Every figure of a task (figures.ts) from its totals: the summary's and rule 10's variance. */
export function figuresOf(totals: TaskTotals): Record<FigureKey, Decimal> {
  return { ...totals, variance: variance(totals) };
}

/**
 * A member's cost lines over several tasks: lines of the same role and rate are one line, their hours
 * and costs the sums of the tasks' (each rounded on its task), their days the widest span.
 */
function mergeCostLines(lines: readonly CostLine[]): CostLine[] {
  const merged = new Map<string, CostLine>();
  for (const line of lines) {
    const key = `${line.jobRole}\u0000${line.hourlyRate.toFixed()}\u0000${line.billRate.toFixed()}`;
    const seen = merged.get(key);
    if (!seen) {
      merged.set(key, { ...line });
      continue;
    }
    seen.loggedHours = seen.loggedHours.plus(line.loggedHours);
    seen.actualCost = seen.actualCost.plus(line.actualCost);
    seen.actualRevenue = seen.actualRevenue.plus(line.actualRevenue);
    seen.costMissing ||= line.costMissing;
    seen.billMissing ||= line.billMissing;
    if (compareText(line.firstDay, seen.firstDay) < 0) seen.firstDay = line.firstDay;
    if (compareText(line.lastDay, seen.lastDay) > 0) seen.lastDay = line.lastDay;
  }
  return [...merged.values()].sort(compareLines);
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
    seen.estimatedRevenue = seen.estimatedRevenue.plus(member.estimatedRevenue);
    seen.actualRevenue = seen.actualRevenue.plus(member.actualRevenue);
    seen.missingCostRate ||= member.missingCostRate;
    seen.missingBillRate ||= member.missingBillRate;
    seen.costLines = [...seen.costLines, ...member.costLines];
  }
  return [...merged.values()].map((member) => ({ ...member, costLines: mergeCostLines(member.costLines) })).sort(compareMembers);
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
        estimatedRevenue: sum(group.map((m) => m.estimatedRevenue)),
        actualRevenue: sum(group.map((m) => m.actualRevenue)),
        members: group,
      };
    });
}

/** A task in a project's tree, with its own figures. */
export type TreeTask = { id: string; parentId: string | null; billable: boolean; totals: TaskTotals };

/**
 * The billable filter (docs/finance-rules.md R13): whether a task's own figures count under it. A task that
 * does not pass is still listed when a descendant does, with only its descendants' figures. For what
 * is computed here (roll-ups on the fly, the cost lines an export writes); the stored roll-ups keep
 * billable and non-billable sums apart, and a stored list picks the filter's (the read model).
 */
export function passesBillableFilter(filter: 'all' | 'billable' | 'non-billable', billable: boolean): boolean {
  return filter === 'all' || (filter === 'billable') === billable;
}

/** A task's roll-up under a filter: the sums over itself and its descendants that pass it. */
export type RolledUp = { totals: TaskTotals; tasks: number; subTasks: number };

/**
 * Roll-ups (docs/finance-rules.md R12): each task's figures summed over itself and its descendants (every task
 * given is non-archived) that pass `passes`, how many of them pass (a task is listed when any does),
 * and how many of its children hold a passing task. What the stored roll-ups of a project list hold
 * (rollups.sql.ts's refreshRollups), for lists computed on the fly. A whole project's tasks are
 * summed in turns of the event loop (turns.ts).
 */
export async function rollUp(tasks: readonly TreeTask[], passes: (task: TreeTask) => boolean, budgetMs = TURN_MS): Promise<Map<string, RolledUp>> {
  const children = await groupByInTurns(tasks, (task) => task.parentId, budgetMs);
  const rolled = new Map<string, RolledUp>();
  const ids = new Set(tasks.map((task) => task.id));
  const pace = turns(budgetMs);
  // Depth first without recursion, a task summed once its children are: one turn check per task,
  // so a project under a single root is paced as well as one of many.
  const stack = tasks.filter((task) => task.parentId === null || !ids.has(task.parentId)).map((task) => ({ task, childrenDone: false }));
  while (stack.length) {
    if (pace.due()) await pace.take();
    const top = stack.pop() as { task: TreeTask; childrenDone: boolean };
    const kids = children.get(top.task.id) ?? [];
    if (!top.childrenDone) {
      stack.push({ task: top.task, childrenDone: true });
      for (const child of kids) stack.push({ task: child, childrenDone: false });
      continue;
    }
    const below = kids.map((child) => rolled.get(child.id) as RolledUp);
    const own = passes(top.task) ? [top.task.totals] : [];
    rolled.set(top.task.id, {
      totals: addTotals([...own, ...below.map((child) => child.totals)]),
      tasks: own.length + below.reduce((count, child) => count + child.tasks, 0),
      subTasks: below.filter((child) => child.tasks > 0).length,
    });
  }
  return rolled;
}
