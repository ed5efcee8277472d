import type { Knex } from 'knex';
import { groupBy } from '../../group-by';
import { toJson } from '../../json';
import { nowIso } from '../../clock';
import { turns } from '../../turns';
import { ChangedLine, CostLineInput, LinesChange, MemberInput, TaskFinance, TaskInput, computeTaskFinance, figuresOf, totalsWithEstimateOf, warningsOf } from '../rules/calculator';
import { LABOR_FIGURES, LaborFigureName } from '../rules/figures';
import { Decimal, toDecimal } from '../rules/money';
import { presentAssignees, presentWarnings, renderBreakdownMembers } from '../rules/present';
import { ChangedLineRow } from '../inputs/cost-changes';
import { ParticipantRow, assigneesToday, participantsInScope } from '../inputs/participants';
import { DayRange, FinanceTaskRow, Scope, tasksInScope } from '../inputs/scope';
import type { BreakdownParts } from './breakdown.sql';
import { StoredActuals, TaskFiguresRow, TaskLaborRow, refreshRollups, storedActuals, updateTaskFigures, upsertTaskLabor } from './rollups.sql';

/*
 * Each task's own figures (labor figures, totals and variance) are computed by the calculator and
 * stored (task_labor) with the parts of its breakdown that depend on its members (the member entries,
 * the role groups, the assignees as a list row shows them, as JSON text), and with its subtree's
 * roll-ups (SQL sums of those stored figures), so a breakdown reads one row and a project list one row
 * per task. No write refreshes them: freshness.ts brings a project's stored
 * figures current when a read finds their stamp out of date, with refreshTaskLabor below.
 */

/**
 * Decimals of rate texts, parsed once per batch: a project's rates are a handful of values, its cost
 * lines hundreds of thousands (decimals are immutable, so sharing them is safe).
 */
function decimalCache() {
  const seen = new Map<string, Decimal>();
  return (text: string): Decimal => {
    let value = seen.get(text);
    if (!value) {
      value = toDecimal(text);
      seen.set(text, value);
    }
    return value;
  };
}

function memberInputOf(row: ParticipantRow, decimal: (text: string) => Decimal): MemberInput {
  return {
    teamMemberId: row.team_member_id,
    name: row.name,
    avatarUrl: row.avatar_url,
    jobRole: row.job_role,
    hourlyRate: row.hourly_rate === null ? null : decimal(row.hourly_rate),
    billRate: row.bill_rate === null ? null : decimal(row.bill_rate),
    costRateSource: row.cost_source,
    billRateSource: row.bill_source,
    isAssignee: row.is_assignee,
    hasLoggedTime: row.has_logged_time,
    costLines: row.cost_lines.map(
      (line): CostLineInput => ({
        jobRole: line.job_role,
        hourlyRate: decimal(line.hourly_rate),
        billRate: decimal(line.bill_rate),
        costMissing: line.cost_missing,
        billMissing: line.bill_missing,
        seconds: line.seconds,
        firstDay: line.first_day,
        lastDay: line.last_day,
      }),
    ),
  };
}

/**
 * costLinesChangedAt's batches as the calculator takes them: task by task (its rows come ordered by
 * task, then member), each member's cost lines before and after the change. A row is the seconds of
 * one role at one rate of each card; a line of a card is the rows of one role and one rate of that
 * card added up (seconds summed; the lines' days are not read). Only the
 * task at hand is held, in turns of the event loop (a change can reach every line of a project).
 */
export async function* linesChangeByTask(batches: AsyncIterable<readonly ChangedLineRow[]>): AsyncGenerator<{ taskId: string; changes: LinesChange[] }> {
  const decimal = decimalCache();
  // A member's lines on a task are a handful: found by a look along a short list, not by a map each.
  type Line = ChangedLine & { roleId: string | null; rate: string };
  const add = (lines: Line[], row: ChangedLineRow, rate: string) => {
    const line = lines.find((candidate) => candidate.roleId === row.job_role_id && candidate.rate === rate);
    if (line) line.seconds += row.seconds;
    else lines.push({ roleId: row.job_role_id, rate, jobRole: row.job_role, hourlyRate: decimal(rate), seconds: row.seconds });
  };
  let task: { id: string; pairs: Map<string, { before: Line[]; after: Line[] }> } | undefined;
  const pace = turns();
  for await (const rows of batches) {
    for (const row of rows) {
      if (pace.due()) await pace.take();
      if (task?.id !== row.task_id) {
        if (task) yield { taskId: task.id, changes: [...task.pairs.values()] };
        task = { id: row.task_id, pairs: new Map() };
      }
      let pair = task.pairs.get(row.team_member_id);
      if (!pair) task.pairs.set(row.team_member_id, (pair = { before: [], after: [] }));
      add(pair.before, row, row.hourly_rate_before);
      add(pair.after, row, row.hourly_rate);
    }
  }
  if (task) yield { taskId: task.id, changes: [...task.pairs.values()] };
}

export function memberInputsByTask(rows: readonly ParticipantRow[]): Map<string, MemberInput[]> {
  const decimal = decimalCache();
  return groupBy(rows, (row) => row.task_id, (row) => memberInputOf(row, decimal));
}

/**
 * Participants by task, read lazily: a task's members are parsed (decimals made) when the task is
 * computed, not all at once before the first yield to the event loop.
 */
export function lazyMembers(rows: readonly ParticipantRow[]) {
  const byTask = groupBy(rows, (row) => row.task_id);
  const decimal = decimalCache();
  return (taskId: string): MemberInput[] => (byTask.get(taskId) ?? []).map((row) => memberInputOf(row, decimal));
}

/** What a task's figures are computed from besides its members: its own inputs and how its project prices. */
export type PricedTask = Pick<FinanceTaskRow, 'estimated_hours' | 'fixed_cost' | 'billable' | 'per_day' | 'bills'>;

/** A task's inputs as the calculator takes them (its members given). */
export function taskInputOf(task: PricedTask, members: readonly MemberInput[]): TaskInput {
  return {
    estimatedHours: toDecimal(task.estimated_hours),
    fixedCost: toDecimal(task.fixed_cost),
    members,
    billable: task.billable,
    perDay: perDayOf(task),
    bills: task.bills,
  };
}

/** A task's project's hours of a day when its rates are per day, else null (R21). */
export const perDayOf = (task: Pick<FinanceTaskRow, 'per_day'>) => (task.per_day === null ? null : toDecimal(task.per_day));

export function financeOf(task: PricedTask, members: readonly MemberInput[] | undefined, currency: string): TaskFinance {
  return computeTaskFinance(taskInputOf(task, members ?? []), currency);
}

/**
 * Tasks whose participants are read by one statement: a project's per-day totals are read and parsed a
 * batch at a time, never all at once (a 10,000-task project's are some 400,000 rows). Each batch's
 * statement looks its tasks' rows up by index, so its cost is its tasks' whatever the batch size; a
 * batch of 150 tasks on the benchmark's dataset is some 10,000 rows, put together in turns of the
 * event loop (participants.ts's assembleParticipants) and held in memory with the next batch's.
 * The driver parses each answer in one go as it arrives: at 500 tasks (32,000 rows) that was the
 * longest stretch of a preview, with the garbage collection it brought (BENCHMARKS.md, seventh run).
 * (refreshSettings.readBatch; tests make it small to go through many batches.)
 */
const READ_BATCH = 150;

/**
 * Tasks whose re-costed estimates one statement stores (refreshTaskEstimates): fewer statements than
 * tasks, each sent while the next batch is computed (one statement for every task measured no faster).
 */
const WRITE_BATCH = 2000;

/**
 * A refresh of at most this many tasks stores their breakdown parts; a larger one (a project-wide
 * change) stores their figures only and leaves the parts empty, to be computed by each task's next
 * breakdown read and stored then (finance.service's getBreakdown). The parts are most of the work: on
 * the benchmark's 10,000-task project about 230 MB of JSON, half the service's time and most of the
 * database's, for breakdowns few of which are read before the next change.
 */
export const refreshSettings = { partsEagerly: 200, readBatch: READ_BATCH, writeBatch: WRITE_BATCH };

const NO_PARTS = { members_json: null, grouped_members_json: null, warnings_json: null };

/** The parts of a task's breakdown that are stored (the members, role groups and warnings of docs/api.md), as JSON text. */
export function breakdownParts(finance: TaskFinance): BreakdownParts {
  const { members, groupedMembers } = renderBreakdownMembers(finance.members);
  return {
    members_json: members,
    grouped_members_json: groupedMembers,
    warnings_json: toJson(presentWarnings(warningsOf(finance.members))),
  };
}

/**
 * The tasks in batches of refreshSettings.readBatch, each with its participants. The next batch's statement is sent
 * before the current batch is handed out, so the database reads it while the caller computes this one
 * (on one connection, a caller's own statements queue behind it).
 */
async function* participantBatches<T extends { id: string }>(
  db: Knex,
  teamId: string,
  projectId: string,
  tasks: readonly T[],
  now: string,
  range: DayRange,
) {
  const size = refreshSettings.readBatch;
  const read = (from: number) => {
    const batch = tasks.slice(from, from + size);
    const scope: Scope = { kind: 'tasks', projectId, taskIds: batch.map((task) => task.id) };
    const rows = participantsInScope(db, teamId, scope, now, range);
    // Handled here too: a caller that stops at an earlier batch's error never awaits this one.
    rows.catch(() => undefined);
    return { batch, rows };
  };
  let next = tasks.length > 0 ? read(0) : undefined;
  for (let from = 0; next; from += size) {
    const current = next;
    const rows = await current.rows;
    next = from + size < tasks.length ? read(from + size) : undefined;
    yield { batch: current.batch, membersOf: lazyMembers(rows) };
  }
}

/**
 * The own figures of the tasks in scope, computed by the calculator with the rates and roles of the
 * instant `now` and the time logged in `range`, in turns of the event loop (turns.ts):
 * for figures that are not stored (ranges, previews, cost lines of exports). Each task's totals and
 * its assignees are kept; its members' figures only `withMembers` (a project's are hundreds of
 * thousands of decimals: gigabytes for the benchmark's 10,000-task project).
 */
export async function computeOwnFigures(
  db: Knex,
  teamId: string,
  currency: string,
  scope: Scope,
  now: string,
  range: DayRange = {},
  withMembers = false,
) {
  // Read in batches: one snapshot for all of them (repeatable read) unless the caller's transaction gives one.
  const compute = async (q: Knex) => {
    const tasks = await tasksInScope(q, teamId, scope);
    const assigneesByTask = new Map<string, MemberInput[]>();
    const finances = new Map<string, TaskFinance>();
    const pace = turns();
    for await (const { batch, membersOf } of participantBatches(q, teamId, scope.projectId, tasks, now, range)) {
      for (const task of batch) {
        if (pace.due()) await pace.take();
        const members = membersOf(task.id);
        assigneesByTask.set(task.id, members.filter((member) => member.isAssignee));
        const finance = financeOf(task, members, currency);
        finances.set(task.id, withMembers ? finance : { totals: finance.totals, members: [] });
      }
    }
    return { tasks, assigneesByTask, finances };
  };
  return (db as Knex.Transaction).isTransaction ? compute(db) : db.transaction(compute, { isolationLevel: 'repeatable read' });
}

/**
 * Re-costs the estimates of the given tasks (only what their estimates cost has changed since their
 * figures were stored: see calculator's totalsWithEstimateOf) and stores their figures and assignees;
 * their breakdown parts are marked out of date, for the parts filler or their next breakdown read,
 * and what their figures changed is added to their and their ancestors' roll-ups, in the same write
 * (rollups.sql.ts's updateTaskFigures). A few rows per task, where a full recomputation reads
 * every participant's logged days. The roll-ups it adds to are sums of the stored figures, but for
 * the ancestors of tasks recomputed in the same refresh, which refreshRollups then sums again from what
 * is stored by then.
 */
async function refreshTaskEstimates(
  db: Knex,
  teamId: string,
  project: { id: string; currency: string },
  taskIds: readonly string[],
  actuals: ReadonlyMap<string, StoredActuals>,
  now: string,
): Promise<void> {
  if (taskIds.length === 0) return;
  const tasks = await tasksInScope(db, teamId, { kind: 'tasks', projectId: project.id, taskIds });
  const membersOf = lazyMembers(await assigneesToday(db, teamId, project.id, taskIds, now));
  const pace = turns();
  // Stored a batch at a time, each batch's statement sent before the next batch is computed: the
  // database writes one while the service computes the other (some 5,000 tasks after a raise on the
  // benchmark's largest project: about 130 ms of each).
  let storing: Promise<void> | undefined;
  for (let from = 0; from < tasks.length; from += refreshSettings.writeBatch) {
    const rows: TaskFiguresRow[] = [];
    for (const task of tasks.slice(from, from + refreshSettings.writeBatch)) {
      if (pace.due()) await pace.take();
      const actual = actuals.get(task.id);
      if (!actual) throw new Error(`Task ${task.id} has no stored figures to re-cost the estimate of`);
      const members = membersOf(task.id);
      const totals = totalsWithEstimateOf(
        taskInputOf(task, members),
        {
          loggedHours: toDecimal(actual.logged_hours),
          actualLaborCost: toDecimal(actual.actual_labor_cost),
          actualRevenue: toDecimal(actual.actual_revenue),
          missingRates: toDecimal(actual.has_missing_rates),
        },
        project.currency,
      );
      rows.push({ task_id: task.id, ...storedTotals(totals), assignees_json: toJson(presentAssignees(members, perDayOf(task))) });
    }
    await storing;
    storing = updateTaskFigures(db, teamId, project.id, rows);
    // Handled here too: an error while the next batch is computed is thrown by the await above or below.
    storing.catch(() => undefined);
  }
  await storing;
}

/** A task's figures as task_labor stores them (exact text): those the calculator computes (figures.ts). */
function storedTotals(totals: TaskFinance['totals']): Record<LaborFigureName, string> {
  const values = figuresOf(totals);
  return Object.fromEntries(LABOR_FIGURES.map((figure) => [figure.name, values[figure.key].toFixed()])) as Record<LaborFigureName, string>;
}

/**
 * Recomputes and stores the given tasks' figures (or every task's) with the rates and roles in force
 * today at the instant `now` (in the project's time zone), and every logged day's; re-costs only the
 * estimates of the tasks `estimatesOnly` names (their stored figures current but for what their
 * estimates cost; a task also in `taskIds`, or without stored figures, is recomputed), adding what
 * changed to their and their ancestors' roll-ups; then sums again the roll-ups of the recomputed tasks
 * and their ancestors. Callers serialise refreshes of a project (freshness.ts); the stamp that says the
 * result is current is theirs to write. Returns whether it stored some tasks' figures without their
 * breakdown parts (parts-fill.ts fills them in).
 */
export async function refreshTaskLabor(
  db: Knex,
  teamId: string,
  project: { id: string; currency: string },
  taskIds: readonly string[] | 'all',
  now: string = nowIso(),
  estimatesOnly: readonly string[] = [],
): Promise<boolean> {
  const recomputed = taskIds === 'all' ? 'all' : new Set(taskIds);
  const toRecost = recomputed === 'all' ? [] : [...new Set(estimatesOnly)].filter((id) => !recomputed.has(id));
  // A task to re-cost without stored figures (created beside the change, freshness.ts) is computed in full.
  const actuals = toRecost.length > 0 ? await storedActuals(db, teamId, toRecost) : new Map<string, StoredActuals>();
  const recosted = toRecost.filter((id) => actuals.has(id));
  if (recomputed !== 'all') for (const id of toRecost) if (!actuals.has(id)) recomputed.add(id);
  if (recomputed !== 'all' && recomputed.size === 0 && recosted.length === 0) return false;
  const scope: Scope = recomputed === 'all' ? { kind: 'project', projectId: project.id } : { kind: 'tasks', projectId: project.id, taskIds: [...recomputed] };
  const tasks = recomputed === 'all' || recomputed.size > 0 ? await tasksInScope(db, teamId, scope) : [];
  const withParts = tasks.length <= refreshSettings.partsEagerly;
  const pace = turns();
  // In turns of the event loop (turns.ts): a whole project's recomputation (thousands
  // of tasks through the calculator) must not hold every other request up while it runs; and reading
  // in batches, so its memory stays bounded. (Batches read at different moments of the refresh's
  // transaction are safe: a write committing meanwhile leaves its mark, or a newer revision, behind.)
  for await (const { batch, membersOf } of participantBatches(db, teamId, project.id, tasks, now, {})) {
    const rows: TaskLaborRow[] = [];
    for (const task of batch) {
      if (pace.due()) await pace.take();
      const members = membersOf(task.id);
      const finance = financeOf(task, members, project.currency);
      rows.push({
        task_id: task.id,
        ...storedTotals(finance.totals),
        ...(withParts ? breakdownParts(finance) : NO_PARTS),
        assignees_json: toJson(presentAssignees(members, perDayOf(task))),
      });
    }
    // Stored once the batch is computed: a statement sent earlier would wait behind the next batch's read.
    await upsertTaskLabor(db, teamId, project.id, rows);
  }
  await refreshTaskEstimates(db, teamId, project, recosted, actuals, now);
  await refreshRollups(db, teamId, project.id, recomputed === 'all' ? 'all' : tasks.map((task) => task.id));
  return (!withParts && tasks.length > 0) || recosted.length > 0;
}
