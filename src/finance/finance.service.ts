import type { Knex } from 'knex';
import { groupBy, groupByInTurns } from '../group-by';
import type { Actor } from '../auth/roles';
import { AppError, notFound } from '../http/errors';
import type { PageRequest } from '../http/paging';
import { JsonText, jsonArrayInTurns, jsonBytes, numericJson, successEnvelope } from '../http/respond';
import { checkAmountDecimals } from '../http/validate';
import { getProject, presentProject } from '../projects/projects.service';
import { findTask, listFixedCostChanges } from '../tasks/tasks.repository';
import { lockTaskForWrite, recordFixedCost, requireTask } from '../tasks/tasks.service';
import { RolledUp, TaskFinance, TaskTotals, compareText, combineTaskFinances, figuresOf, passesBillableFilter, rollUp } from './rules/calculator';
import { FIGURES, FIGURE_NAMES, Figure, FigureTexts, SUMMARY_FIGURES } from './rules/figures';
import { Decimal, hourlyOfDayRate, toDecimal } from './rules/money';
import { breakdownParts, computeOwnFigures, financeOf, memberInputsByTask, perDayOf } from './read-model/labor';
import { nextTurn, turns } from '../turns';
import { readCurrent } from './read-model/freshness';
import { nowIso } from '../clock';
import { TaskIdentity, presentAssignees, presentSummary } from './rules/present';
import { participantsInScope } from './inputs/participants';
import { DayRange, FinanceTaskRow, Scope, tasksInScope } from './inputs/scope';
import { ReadAll, batchedReads } from '../db/batched-reads';
import { AnswerCache, createAnswerCache } from './read-model/answer-cache';
import { BreakdownParts, StoredBreakdownRow, storeBreakdownParts, storedBreakdown } from './read-model/breakdown.sql';
import { ListedFigures } from './read-model/columns';
import { ListSummaryRow, ListedProject, ListedRow, NONE_GROUP, listSummary, treeRows } from './read-model/list.sql';
import type { ProjectTasksQuery } from './http/finance.schemas';
import { writeTransaction } from '../finance/read-model/budget-watch';

/** A task's summary from its stored row: figures as PostgreSQL summed them, written as exact literals. */
function storedSummary(row: StoredBreakdownRow) {
  const { id, name, project_id, billable, currency } = row;
  return { id, name, project_id, billable, currency, ...Object.fromEntries(SUMMARY_FIGURES.map((figure) => [figure.name, figureJson(figure, row[figure.name])])) };
}

/** A figure's exact text as JSON: a number, or for a flag (a count of tasks) a boolean. */
function figureJson(figure: Figure, text: string) {
  return figure.unit === 'flag' ? toDecimal(text).gt(0) : numericJson(text);
}

/** Whether a day range limits anything. */
const hasRange = (range: DayRange) => range.from !== undefined || range.to !== undefined;

/** A breakdown's body: the task's summary, and its members and warnings as rendered (breakdown parts). */
function breakdownBody(summary: object, parts: BreakdownParts) {
  return {
    task: summary,
    grouped_members: new JsonText(parts.grouped_members_json),
    members: new JsonText(parts.members_json),
    warnings: new JsonText(parts.warnings_json),
  };
}

/** A stored row's breakdown parts, when it has all of them. */
function storedParts({ members_json, grouped_members_json, warnings_json }: StoredBreakdownRow): BreakdownParts | undefined {
  return members_json !== null && grouped_members_json !== null && warnings_json !== null ? { members_json, grouped_members_json, warnings_json } : undefined;
}

/** A computed breakdown's body. */
const computedBody = (task: TaskIdentity, currency: string, finance: TaskFinance, parts = breakdownParts(finance)) =>
  breakdownBody(presentSummary(task, currency, finance.totals), parts);

/**
 * The tasks of a scope, each with its own figures computed by the calculator from its members with the
 * rates and roles in force at the instant `now` and the time logged in `range` (two statements, at once),
 * in turns of the event loop: a subtree, or a turn's batch of big out-of-date tasks, is many members.
 */
async function ownFinances(db: Knex, teamId: string, scope: Scope, currency: string, now: string, range: DayRange = {}) {
  const [tasks, participants] = await Promise.all([tasksInScope(db, teamId, scope), participantsInScope(db, teamId, scope, now, range)]);
  const membersByTask = memberInputsByTask(participants);
  const owns: { task: FinanceTaskRow; finance: TaskFinance }[] = [];
  const pace = turns();
  for (const task of tasks) {
    if (pace.due()) await pace.take();
    owns.push({ task, finance: financeOf(task, membersByTask.get(task.id), currency) });
  }
  return owns;
}

/**
 * A task alone or with its non-archived descendants, computed by the calculator from their members
 * with the rates and roles in force today at the instant `now`, and the time logged in `range` (three queries).
 */
async function computedBreakdown(db: Knex, teamId: string, taskId: string, includeSubtasks: boolean, now: string, range: DayRange = {}) {
  const task = await requireTask(db, teamId, taskId);
  const scope: Scope = includeSubtasks
    ? { kind: 'subtree', projectId: task.project_id, taskId }
    : { kind: 'tasks', projectId: task.project_id, taskIds: [task.id] };
  const finances = (await ownFinances(db, teamId, scope, task.currency, now, range)).map((own) => own.finance);
  // A task alone is its own figures (what a refresh stores); a subtree merges its tasks' members.
  const finance = includeSubtasks ? combineTaskFinances(finances) : (finances[0] ?? combineTaskFinances([]));
  return { financeVersion: task.finance_version, finance, body: computedBody(task, task.currency, finance) };
}

/** A task whose stored row a breakdown found out of date (or without parts), and the instant it was read at. */
type OutOfDateKey = { teamId: string; projectId: string; currency: string; taskId: string; now: string };

/** A task found out of date, computed; or the error its project's statements met. */
type OutOfDate = { task: FinanceTaskRow; finance: TaskFinance } | Error;

/**
 * The figures of tasks found out of date, computed by the calculator at the instant their rows were
 * read at. Batched as the stored reads are (db/batched-reads.ts): right after a burst of writes most
 * breakdowns find their task marked, and the tasks of one project found so in one turn of the loop
 * share two statements (their rows and their participants) instead of three each. A group's failure
 * (a statement timeout on a big project, say) is its keys' alone: other projects' and teams'
 * breakdowns read in the same turn are answered.
 */
const readOutOfDate: ReadAll<OutOfDateKey, OutOfDate> = async (db, keys) => {
  const answers: (OutOfDate | undefined)[] = keys.map(() => undefined);
  const groups = groupBy(keys.keys(), (i) => {
    const key = keys[i] as OutOfDateKey;
    return `${key.teamId} ${key.projectId} ${key.now}`;
  });
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      const { teamId, projectId, currency, now } = keys[indexes[0] as number] as OutOfDateKey;
      const scope: Scope = { kind: 'tasks', projectId, taskIds: indexes.map((i) => (keys[i] as OutOfDateKey).taskId) };
      const computed = await ownFinances(db, teamId, scope, currency, now).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
      if (computed instanceof Error) {
        for (const i of indexes) answers[i] = computed;
        return;
      }
      // Archived since its row was read: not found (undefined), as a read a moment later would say.
      const byId = new Map(computed.map((own) => [own.task.id, own]));
      for (const i of indexes) answers[i] = byId.get((keys[i] as OutOfDateKey).taskId);
    }),
  );
  return answers;
};
const computeOutOfDate = batchedReads(readOutOfDate, { identify: (key) => `${key.teamId} ${key.taskId} ${key.now}` });

/** A computed breakdown's answer: its success envelope, encoded. */
const encoded = ({ financeVersion, body }: { financeVersion: number; body: unknown }) => ({ financeVersion, answer: jsonBytes(successEnvelope(body)) });

/**
 * A task's breakdown. Alone and over all days, it is one read of the task and its stored labor row
 * (in one statement with the other breakdowns asked for meanwhile, read-model/breakdown.sql.ts) when its
 * project's stored figures are current (freshness.ts; the check is in the same statement), else
 * the calculator computes it on the fly (with the other tasks found out of date in the same turn:
 * computeOutOfDate); with its subtasks, the calculator merges the subtree's members.
 * A current row without its parts (left empty by a project-wide refresh, labor.ts) is computed on the
 * fly too, and its parts are stored for the next read.
 */
export async function getBreakdown(
  db: Knex,
  teamId: string,
  taskId: string,
  includeSubtasks: boolean,
  range: DayRange = {},
  answers: AnswerCache = createAnswerCache(0),
): Promise<{ financeVersion: number; answer: Buffer; staleProject?: string }> {
  if (hasRange(range)) return encoded(await computedBreakdown(db, teamId, taskId, includeSubtasks, nowIso(), range));
  if (includeSubtasks) return encoded(await computedBreakdown(db, teamId, taskId, includeSubtasks, nowIso()));
  const key = `${teamId} ${taskId}`;
  const held = answers.held(key);
  const row = await storedBreakdown(db, { teamId, taskId, known: held?.version });
  if (!row) throw notFound('TASK_NOT_FOUND', 'Task');
  // The answer held is of the version read, which is current: its parts were not read.
  if (row.current && row.known && held?.version === row.answer_version) return { financeVersion: row.finance_version, answer: held.body };
  const stored = row.current ? storedParts(row) : undefined;
  if (stored) {
    // Requests for one task in one turn share its row (storedBreakdown), and its answer: encoded once.
    row.answer ??= jsonBytes(successEnvelope(breakdownBody(storedSummary(row), stored)));
    answers.keep(key, row.answer_version, row.answer);
    return { financeVersion: row.finance_version, answer: row.answer };
  }
  // On the day the row was found out of date (or without parts) for. Its ETag is the row's: inputs
  // read after it are at least as new, so an If-Match built from it never passes over a newer write.
  const computed = await computeOutOfDate(db, { teamId, projectId: row.project_id, currency: row.currency, taskId, now: row.read_at });
  if (computed instanceof Error) throw computed;
  if (!computed) throw notFound('TASK_NOT_FOUND', 'Task');
  const parts = breakdownParts(computed.finance);
  if (row.current && row.labor_version !== null) {
    await storeBreakdownParts(db, teamId, [{ task_id: row.id, version: row.labor_version, parts_version: row.parts_version, ...parts }]);
  }
  // Out of date: the caller may bring the project current behind the answer (finance.router.ts).
  const body = computedBody(computed.task, row.currency, computed.finance, parts);
  return { ...encoded({ financeVersion: row.finance_version, body }), staleProject: row.current ? undefined : row.project_id };
}

export function matchesIfMatch(header: string | undefined, version: number): boolean {
  if (header === undefined) return true;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etagOf(version));
}

export const etagOf = (version: number) => `"${version}"`;

export async function updateFixedCost(db: Knex, actor: Actor, taskId: string, fixedCost: number, ifMatch: string | undefined) {
  return writeTransaction(db, async (trx) => {
    const { task } = await lockTaskForWrite(trx, actor.teamId, taskId, true);
    checkAmountDecimals('fixed_cost', fixedCost, task.currency);
    if (!matchesIfMatch(ifMatch, task.finance_version)) {
      throw new AppError(412, 'PRECONDITION_FAILED', `If-Match does not match the task's current version ${etagOf(task.finance_version)}`);
    }
    await recordFixedCost(trx, actor, task, toDecimal(fixedCost));
    const computed = await computedBreakdown(trx, actor.teamId, taskId, false, nowIso());
    return { financeVersion: computed.financeVersion, body: computed.body.task };
  });
}

export async function fixedCostHistory(db: Knex, teamId: string, taskId: string, page: PageRequest) {
  await requireTask(db, teamId, taskId);
  const { rows, next } = await listFixedCostChanges(db, teamId, taskId, page);
  return { rows: rows.map((row) => ({ ...row, old_value: toDecimal(row.old_value), new_value: toDecimal(row.new_value) })), next };
}

/*
 * Project lists and exports. The roll-ups are stored (labor.ts, refreshRollups, kept current by
 * freshness.ts): one statement reads the listed tasks with their rolled-up figures under the filter. A list's rows, totals and groups are
 * rendered and summed by PostgreSQL (exact numerics); an export's totals are added up here, in exact
 * decimals.
 */

/** Every figure of a list row or a sum of rows, as exact decimal text. */
export type { FigureTexts };

/**
 * Sums rows' figures, each on its own (the rows' totals and variance are the calculator's). In turns of
 * the event loop (turns.ts): an export's starting level can be thousands of rows, and several exports
 * can be summing at once.
 */
async function sumRows(rows: readonly ListedFigures[]): Promise<FigureTexts> {
  const sums = FIGURE_NAMES.map(() => toDecimal(0));
  const pace = turns();
  for (const row of rows) {
    if (pace.due()) await pace.take();
    FIGURE_NAMES.forEach((figure, i) => (sums[i] = (sums[i] as Decimal).plus(toDecimal(row[figure]))));
  }
  return Object.fromEntries(FIGURE_NAMES.map((figure, i) => [figure, (sums[i] as Decimal).toFixed()])) as FigureTexts;
}

/** Every figure of task totals (the calculator's figuresOf) as exact decimal text. */
function figureTexts(totals: TaskTotals): FigureTexts {
  const values = figuresOf(totals);
  return Object.fromEntries(FIGURES.map((figure) => [figure.name, values[figure.key].toFixed()])) as FigureTexts;
}

/** What a list filter selects: the tasks whose own figures count, where the listing starts, the log days counted. */
export type ListFilter = { billable_filter: ProjectTasksQuery['billable_filter']; parent_task_id?: string } & DayRange;

/** Cost lines written out between two yields to the event loop. */
const SLICE = 500;

/** A listed row computed on the fly: its figures as exact text, with its assignees. */
type ComputedRow = ListedRow & { project_id: string; assignees: ReturnType<typeof presentAssignees> };

/**
 * Every listed task of a project at every level (creation order), computed on the fly by the
 * calculator with the time logged in `range`, and rolled up under the billable filter by its rule.
 */
async function computedTreeRows(
  db: Knex,
  teamId: string,
  project: { id: string; currency: string },
  filter: ListFilter['billable_filter'],
  range: DayRange,
): Promise<ComputedRow[]> {
  const scope: Scope = { kind: 'project', projectId: project.id };
  const { tasks, assigneesByTask, finances } = await computeOwnFigures(db, teamId, project.currency, scope, nowIso(), range);
  const tree = tasks.map((task) => ({
    id: task.id,
    parentId: task.parent_task_id,
    billable: task.billable,
    totals: (finances.get(task.id) as TaskFinance).totals,
  }));
  const rolled = await rollUp(tree, (task) => passesBillableFilter(filter, task.billable));
  const rows: ComputedRow[] = [];
  const pace = turns();
  for (const task of tasks) {
    if (pace.due()) await pace.take();
    const { totals, subTasks, tasks: passing } = rolled.get(task.id) as RolledUp;
    if (passing === 0) continue;
    rows.push({
      id: task.id,
      name: task.name,
      project_id: task.project_id,
      parent_task_id: task.parent_task_id,
      billable: task.billable,
      status: task.status,
      priority: task.priority,
      phase: task.phase,
      sub_tasks_count: subTasks,
      ...figureTexts(totals),
      assignees: presentAssignees(assigneesByTask.get(task.id) ?? [], perDayOf(task)),
    });
  }
  return rows;
}

/** A list computed on the fly (with a day range): the same body as the stored list's. */
async function computedList(db: Knex, teamId: string, project: ListedProject, query: ProjectTasksQuery, parentId: string | null) {
  const all = await computedTreeRows(db, teamId, project, query.billable_filter, query);
  const rows = all.filter((row) => row.parent_task_id === parentId);
  const { id, name, currency, budget, rate_unit, hours_per_day } = presentProject(project);
  const body: Record<string, unknown> = {
    project: { id, name, currency, budget, rate_unit, hours_per_day },
    // Thousands of rows: rendered a slice at a time, not in one go when the response is sent.
    tasks: await jsonArrayInTurns(
      rows.map((row) => ({
        id: row.id,
        name: row.name,
        project_id: row.project_id,
        billable: row.billable,
        currency: project.currency,
        ...jsonFigures(row, true),
        parent_task_id: row.parent_task_id,
        sub_tasks_count: row.sub_tasks_count,
        ...jsonFigures(row, false),
        status: row.status,
        priority: row.priority,
        phase: row.phase,
        assignees: row.assignees,
      })),
    ),
    totals: jsonFigures(await sumRows(rows)),
  };
  const field = query.group_by;
  if (field) {
    const groups = groupBy(rows, (row) => row[field] ?? NONE_GROUP);
    const names = [...groups.keys()].sort(compareGroupNames);
    const summed = [];
    for (const group of names) {
      const members = groups.get(group) ?? [];
      summed.push({ group_name: group, task_ids: members.map((row) => row.id), ...jsonFigures(await sumRows(members)) });
    }
    body.groups = summed;
  }
  return body;
}

/** The task parent_task_id names (looked up beside the list's own query), or undefined without one. */
function findListParent(db: Knex, teamId: string, parentId: string | null) {
  return parentId === null ? Promise.resolve(undefined) : findTask(db, teamId, parentId);
}

/** With parent_task_id, the parent must be a non-archived task of the project: 404 otherwise. */
function checkListParent(parentId: string | null, parent: { project_id: string } | undefined, projectId: string): void {
  if (parentId !== null && parent?.project_id !== projectId) throw notFound('TASK_NOT_FOUND', 'Parent task');
}

/** The figures as JSON numbers, in the contract's order: all, or those of the summary (or not). */
function jsonFigures(figures: FigureTexts, summary?: boolean) {
  const shown = summary === undefined ? FIGURES : FIGURES.filter((figure) => figure.summary === summary);
  return Object.fromEntries(shown.map((figure) => [figure.name, figureJson(figure, figures[figure.name])]));
}

/**
 * A project list: the listed rows (rendered by PostgreSQL, see read-model/list.sql.ts) with their sums
 * and groups, from one statement. `project` is read before the rows (never beside them), so the rows
 * are at least as new as its revision.
 */
export async function listProjectTasks(db: Knex, teamId: string, project: ListedProject, query: ProjectTasksQuery) {
  const parentId = query.parent_task_id?.toLowerCase() ?? null;
  const scope = { teamId, projectId: project.id, filter: query.billable_filter, parentId, currency: project.currency, groupBy: query.group_by };
  // The parent first: a 404 leaves no read or refresh running behind the response.
  checkListParent(parentId, await findListParent(db, teamId, parentId), project.id);
  if (hasRange(query)) return computedList(db, teamId, project, query, parentId);
  const summary = await readCurrent(db, teamId, project.id, async (q, now) => {
    const rows = await listSummary(q, scope, now);
    return { current: rows.every((row) => row.current), value: rows };
  });
  const whole = summary.find((row) => row.group_name === null) as ListSummaryRow;
  const { id, name, currency, budget, rate_unit, hours_per_day } = presentProject(project);
  const body: Record<string, unknown> = {
    project: { id, name, currency, budget, rate_unit, hours_per_day },
    tasks: new JsonText('[', whole.rows_json ?? '', ']'),
    totals: jsonFigures(whole),
  };
  if (query.group_by) body.groups = presentListGroups(summary);
  return body;
}

export type ExportRow = ListedRow;

/**
 * Every listed task at every level under the filter's starting point, depth first, with its depth
 * (0 for the starting level), plus the list's totals: what an export writes.
 */
export async function projectTaskTree(db: Knex, teamId: string, projectId: string, filter: ListFilter) {
  const parentId = filter.parent_task_id?.toLowerCase() ?? null;
  const [project, parent] = await Promise.all([getProject(db, teamId, projectId), findListParent(db, teamId, parentId)]);
  checkListParent(parentId, parent, project.id);
  const rows: ListedRow[] = hasRange(filter)
    ? await computedTreeRows(db, teamId, project, filter.billable_filter, filter)
    : await readCurrent(db, teamId, projectId, async (q, now) => {
        const tree = await treeRows(q, { teamId, projectId, filter: filter.billable_filter }, now);
        return { current: tree.current, value: tree.rows };
      });
  // A whole project's rows: grouped, walked and summed in turns of the event loop (turns.ts), so that
  // concurrent exports never add up to one long wait for every other request.
  const children = await groupByInTurns(rows, (row) => row.parent_task_id ?? '');
  const starting = children.get(parentId ?? '') ?? [];
  const listed: { depth: number; row: ExportRow }[] = [];
  const stack = [...starting].reverse().map((row) => ({ row, depth: 0 }));
  const pace = turns();
  while (stack.length) {
    if (pace.due()) await pace.take();
    const { row, depth } = stack.pop() as { row: ListedRow; depth: number };
    listed.push({ depth, row });
    const below = children.get(row.id);
    if (below) for (let i = below.length - 1; i >= 0; i--) stack.push({ row: below[i] as ListedRow, depth: depth + 1 });
  }
  await nextTurn();
  return {
    project: { id: project.id, name: project.name, currency: project.currency, rate_unit: project.rate_unit },
    parent: parent ? { id: parent.id, name: parent.name } : null,
    rows: listed,
    totals: await sumRows(starting),
  };
}

/** One cost line of a task's own figures, for the exports: figures as exact decimal text. */
export type ExportCostLine = {
  task_id: string;
  task_name: string;
  team_member_id: string;
  member_name: string;
  job_role: string;
  /** The line's rates as shown (per hour; in a "day" project the day rates / hours_per_day, 4 decimals: R21). */
  hourly_rate: string;
  bill_rate: string;
  /** In a "day" project, the line's rates per day as entered (R21); null in an "hour" project. */
  day_rate: string | null;
  day_bill_rate: string | null;
  logged_hours: string;
  actual_cost: string;
  actual_revenue: string;
  first_day: string;
  last_day: string;
};

/**
 * The cost lines (docs/finance-rules.md R15.3) of the given tasks' own figures that count under the
 * billable filter, computed by the calculator with the time logged in the filter's `from` / `to`: in the tasks' order,
 * then member order, then line order. A task listed only for a descendant that passes the filter has
 * none (its own figures are not in its row), so the lines add up to the exported actual costs.
 */
export async function costLinesOf(
  db: Knex,
  teamId: string,
  project: { id: string; currency: string },
  listed: readonly { id: string; name: string; billable: boolean }[],
  filter: ListFilter,
): Promise<ExportCostLine[]> {
  const tasks = listed.filter((task) => passesBillableFilter(filter.billable_filter, task.billable));
  if (tasks.length === 0) return [];
  const scope: Scope = { kind: 'tasks', projectId: project.id, taskIds: tasks.map((task) => task.id) };
  const { finances } = await computeOwnFigures(db, teamId, project.currency, scope, nowIso(), filter, true);
  const lines: ExportCostLine[] = [];
  for (let from = 0; from < tasks.length; from += SLICE) {
    if (from > 0) await nextTurn();
    for (const task of tasks.slice(from, from + SLICE)) {
      for (const member of finances.get(task.id)?.members ?? []) {
        for (const line of member.costLines) {
          lines.push({
            task_id: task.id,
            task_name: task.name,
            team_member_id: member.teamMemberId,
            member_name: member.name,
            job_role: line.jobRole,
            hourly_rate: (member.perDay === null ? line.hourlyRate : hourlyOfDayRate(line.hourlyRate, member.perDay)).toFixed(),
            bill_rate: (member.perDay === null ? line.billRate : hourlyOfDayRate(line.billRate, member.perDay)).toFixed(),
            day_rate: member.perDay === null ? null : line.hourlyRate.toFixed(),
            day_bill_rate: member.perDay === null ? null : line.billRate.toFixed(),
            logged_hours: line.loggedHours.toFixed(),
            actual_cost: line.actualCost.toFixed(),
            actual_revenue: line.actualRevenue.toFixed(),
            first_day: line.firstDay,
            last_day: line.lastDay,
          });
        }
      }
    }
  }
  return lines;
}

/** Group order (docs/finance-rules.md R14.2): by name, "None" last. */
function compareGroupNames(a: string, b: string): number {
  const rank = (name: string) => (name === NONE_GROUP ? 1 : 0);
  return rank(a) - rank(b) || compareText(a, b);
}

/** Groups in name order, "None" last (docs/finance-rules.md R14.2). */
function presentListGroups(summary: readonly ListSummaryRow[]) {
  return summary
    .filter((row): row is ListSummaryRow & { group_name: string } => row.group_name !== null)
    .sort((a, b) => compareGroupNames(a.group_name, b.group_name))
    .map((row) => ({ group_name: row.group_name, task_ids: new JsonText('[', row.ids_json ?? '', ']'), ...jsonFigures(row) }));
}
