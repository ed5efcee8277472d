import { groupBy, groupByInTurns } from '../../group-by';
import { TURN_MS, turns } from '../../turns';
import { FigureKey, SUMMARY_FIGURES, SummaryFigureKey } from './figures';
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
 *    of UTC; list.sql.ts's DATED_PERIODS), so figures stored under 3 may cost such a log as
 *    "Unassigned".
 */
export const CALCULATOR_VERSION = 4;

export const UNASSIGNED_ROLE = 'Unassigned';

/**
 * A member's logged seconds on a task on the days one (role, rate) pair was in force
 * (docs/finance-rules.md R15.3), over the days asked for.
 */
export type CostLineInput = {
  /** The member's job role on those days, or null when it had none. */
  jobRole: string | null;
  /** That role's rate on those days (0 without one). */
  hourlyRate: Decimal;
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
  /** That role's rate in force today, or null when there is none. */
  hourlyRate: Decimal | null;
  isAssignee: boolean;
  /** Whether the member ever logged time on the task (rule 1), whatever range the lines cover. */
  hasLoggedTime: boolean;
  costLines: readonly CostLineInput[];
};

/** A cost line's figures (rule 4): its hours rounded, then costed at its rate. */
export type CostLine = {
  jobRole: string;
  hourlyRate: Decimal;
  loggedHours: Decimal;
  actualCost: Decimal;
  firstDay: string;
  lastDay: string;
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
  costLines: CostLine[];
};

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

/** Cost lines in order: by first day, then role (code points), then rate. */
function compareLines(a: CostLine, b: CostLine): number {
  return compareText(a.firstDay, b.firstDay) || compareText(a.jobRole, b.jobRole) || a.hourlyRate.comparedTo(b.hourlyRate);
}

/** Rule 4 (section 3b): each line's hours rounded to 2 decimals, its cost the rounded hours times its rate. */
function costLinesOf(lines: readonly CostLineInput[], currency: string): CostLine[] {
  return lines
    .filter((line) => line.seconds > 0)
    .map((line) => {
      const hundredths = hundredthsOfHour(line.seconds);
      return {
        jobRole: line.jobRole ?? UNASSIGNED_ROLE,
        hourlyRate: line.hourlyRate,
        loggedHours: hoursOfHundredths(hundredths),
        actualCost: amountOfMinorUnits(costInMinorUnits(hundredths, line.hourlyRate, currency), currency),
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
function estimatesOf(estimatedHours: Decimal, members: readonly MemberInput[], currency: string) {
  return new Map(
    estimateShares(estimatedHours, members, currency).map(({ member, hundredths, cost }) => [
      member.teamMemberId,
      { estimatedHours: hoursOfHundredths(hundredths), estimatedCost: amountOfMinorUnits(cost, currency) },
    ]),
  );
}

/** estimatesOf's shares as whole numbers: each assignee's hundredths of an hour and their cost in minor units. */
function estimateShares(estimatedHours: Decimal, members: readonly MemberInput[], currency: string) {
  const assignees = members.filter((m) => m.isAssignee).sort(compareMembers);
  const shares = splitHundredths(estimatedHours, assignees.length);
  return assignees.map((member, index) => {
    const hundredths = shares[index] ?? 0n;
    return { member, hundredths, cost: costInMinorUnits(hundredths, member.hourlyRate ?? ZERO, currency) };
  });
}

/** Rules 2, 3, 7 and 6: what a task's estimate costs (its assignees' shares at their rates today), in minor units. */
export function estimateInMinorUnits(task: Pick<TaskInput, 'estimatedHours' | 'members'>, currency: string): bigint {
  let total = 0n;
  for (const share of estimateShares(task.estimatedHours, task.members, currency)) total += share.cost;
  return total;
}

/** Rules 1-6 and 8 for one task, with section 3b's cost lines and today's rates and roles. */
export function computeTaskFinance(task: TaskInput, currency: string): TaskFinance {
  const members = task.members.filter((m) => m.isAssignee || m.hasLoggedTime).sort(compareMembers);
  const estimates = estimatesOf(task.estimatedHours, members, currency);

  const figures = members.map((member): MemberFigures => {
    const costLines = costLinesOf(member.costLines, currency);
    const estimate = estimates.get(member.teamMemberId);
    return {
      teamMemberId: member.teamMemberId,
      name: member.name,
      avatarUrl: member.avatarUrl,
      jobRole: member.jobRole ?? UNASSIGNED_ROLE,
      hourlyRate: member.hourlyRate ?? ZERO,
      estimatedHours: estimate?.estimatedHours ?? ZERO,
      loggedHours: sum(costLines.map((line) => line.loggedHours)),
      estimatedCost: estimate?.estimatedCost ?? ZERO,
      actualCost: sum(costLines.map((line) => line.actualCost)),
      costLines,
    };
  });

  return { members: figures, totals: totalsOf(task.estimatedHours, task.fixedCost, figures) };
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
  actual: Pick<TaskTotals, 'loggedHours' | 'actualLaborCost'>,
  currency: string,
): TaskTotals {
  return taskTotals({
    estimatedHours: task.estimatedHours,
    loggedHours: actual.loggedHours,
    estimatedLaborCost: amountOfMinorUnits(estimateInMinorUnits(task, currency), currency),
    actualLaborCost: actual.actualLaborCost,
    fixedCost: task.fixedCost,
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
export function linesChangeDelta(changes: readonly LinesChange[], currency: string): { hundredths: bigint; minorUnits: bigint } {
  let hundredths = 0n;
  let minorUnits = 0n;
  const count = (lines: readonly ChangedLine[], sign: 1 | -1) => {
    for (const line of lines) {
      if (line.seconds <= 0) continue; // no cost line (costLinesOf)
      const hours = hundredthsOfHour(line.seconds);
      const cost = costInMinorUnits(hours, line.hourlyRate, currency);
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

function totalsOf(estimatedHours: Decimal, fixedCost: Decimal, members: readonly MemberFigures[]): TaskTotals {
  return taskTotals({
    estimatedHours,
    loggedHours: sum(members.map((m) => m.loggedHours)),
    estimatedLaborCost: sum(members.map((m) => m.estimatedCost)),
    actualLaborCost: sum(members.map((m) => m.actualCost)),
    fixedCost,
  });
}

/** Rule 6: the fixed cost is added to both labor costs (`add` adds two numbers of the kind at hand). */
function withTotals<N>(labor: Omit<Figures<N>, 'totalEstimatedCost' | 'totalActualCost'>, add: (a: N, b: N) => N): Figures<N> {
  return {
    ...labor,
    totalEstimatedCost: add(labor.estimatedLaborCost, labor.fixedCost),
    totalActualCost: add(labor.actualLaborCost, labor.fixedCost),
  };
}

export function taskTotals(labor: Omit<TaskTotals, 'totalEstimatedCost' | 'totalActualCost'>): TaskTotals {
  return withTotals(labor, (a, b) => a.plus(b));
}

/** taskTotals in whole ten-thousandths. */
export function scaledTaskTotals(labor: Omit<ScaledTotals, 'totalEstimatedCost' | 'totalActualCost'>): ScaledTotals {
  return withTotals(labor, (a, b) => a + b);
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
    const key = `${line.jobRole}\u0000${line.hourlyRate.toFixed()}`;
    const seen = merged.get(key);
    if (!seen) {
      merged.set(key, { ...line });
      continue;
    }
    seen.loggedHours = seen.loggedHours.plus(line.loggedHours);
    seen.actualCost = seen.actualCost.plus(line.actualCost);
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
