import type { Knex } from 'knex';
import type { Actor } from '../auth/roles';
import { nowIso } from '../clock';
import { JsonText } from '../json';
import { turns } from '../turns';
import { ProjectRow, rateEntries } from '../projects/projects.repository';
import { applyRateCard, getProject } from '../projects/projects.service';
import type { RateCardBody } from '../projects/projects.schemas';
import { Figures, ScaledTotals, TaskFinance, TaskTotals, addTotals, estimateInMinorUnits, linesChangeDelta, rollUp, scaledTaskTotals } from './rules/calculator';
import { bringCurrent } from './read-model/freshness';
import { computeOwnFigures, lazyMembers, linesChangeByTask } from './read-model/labor';
import { presentAmounts } from './rules/present';
import { AMOUNT_FIGURES, LABOR_COST_FIGURES, SUMMARY_FIGURES } from './rules/figures';
import { decimalOfTenThousandths, tenThousandthsOf, tenThousandthsOfHundredths, tenThousandthsOfMinorUnits, tenThousandthsText, toDecimal } from './rules/money';
import { costLinesChangedAt, tasksCostedAt } from './inputs/cost-changes';
import { assigneesToday } from './inputs/participants';
import { FinanceTaskRow, Scope, tasksInScope } from './inputs/scope';
import { ListedFigures } from './read-model/columns';
import { StoredOwnFigures, storedOwnFigures, storedProjectSums } from './read-model/list.sql';

/*
 * The dry run of a rate-card change (docs/finance-rules.md R18, POST /rate-card/preview), in one transaction
 * that is always rolled back, reading one snapshot (repeatable read: a write committed meanwhile by
 * someone else shows in neither side). It does not take the project's write lock, so other writes to
 * the project go on (a concurrent rate-card change waits for the preview's rows, as long as it runs).
 *
 * 1. Inside a savepoint, the change is written by the same code as the PUT (applyRateCard); the roles
 *    whose rate on some day from the change's first day on differs are found, and the tasks those
 *    rates cost (cost-changes.ts's tasksCostedAt), as the refresh after the real change finds them.
 *    The savepoint is rolled back. Every other task's figures are unchanged by construction (its lines
 *    and rates are the same days at the same rates).
 * 2. Those tasks' figures before and after the change, one of two ways:
 *    - when the project's stored figures are current in the snapshot (the preview brings them current
 *      first), from them (changeFromStored): before as stored (what the breakdowns answer); after, the
 *      stored figures less what the cost lines the change reprices gave, plus what they give after
 *      it, and the estimates costed again of the tasks with an assignee whose role today has a
 *      changed rate (when the change takes effect by today). Only the days of the repriced roles'
 *      periods are read (cost-changes.ts's costLinesChangedAt), and only the lines that change
 *      are costed, not every member's every day;
 *    - else (a write committed between, or a task's stored row missing), computed by the calculator
 *      from every input of those tasks, with the change and without it (changeComputed).
 *    Both are the calculator's rules (calculator.ts's linesChangeDelta added to the figures before
 *    equals a whole recomputation); test/integration/finance/rate-preview.test.ts holds each way to
 *    the real change. Each task's figures are whole ten-thousandths (money.ts's tenThousandthsOf, exact
 *    for every figure): thousands of tasks added and compared without a decimal each.
 * 3. The project's totals before are the unfiltered list's (the stored roll-ups; computed from every
 *    task if they are not current in the snapshot); after = before + the changed tasks' differences
 *    (only tasks under no archived ancestor count, as in the list).
 */

/** The own figures of the given tasks (or of every task) at the instant `now`, in creation order. */
async function ownFigures(db: Knex, teamId: string, project: ProjectRow, now: string, taskIds: readonly string[] | 'all') {
  const scope: Scope = taskIds === 'all' ? { kind: 'project', projectId: project.id } : { kind: 'tasks', projectId: project.id, taskIds };
  if (taskIds !== 'all' && taskIds.length === 0) return { tasks: [], finances: new Map<string, TaskFinance>() };
  return computeOwnFigures(db, teamId, project.currency, scope, now);
}

/** Stored figures (a task's own, or sums of them; exact numeric text) as a task's summary figures, each read by `read`. */
function storedFigures<N>(stored: ListedFigures, read: (text: string) => N): Figures<N> {
  return Object.fromEntries(SUMMARY_FIGURES.map((figure) => [figure.key, read(stored[figure.name])])) as Figures<N>;
}

/** Stored figures as task totals: what the calculator computed, read back. */
const storedTotals = (stored: ListedFigures): TaskTotals => storedFigures(stored, toDecimal);

/** A task's stored own figures in whole ten-thousandths. */
const storedScaled = (stored: ListedFigures): ScaledTotals => storedFigures(stored, tenThousandthsOf);

/** A task's computed figures in whole ten-thousandths. */
function computedScaled(totals: TaskTotals): ScaledTotals {
  return Object.fromEntries(SUMMARY_FIGURES.map((figure) => [figure.key, tenThousandthsOf(totals[figure.key])])) as ScaledTotals;
}

/** Stored own figures by task, in whole ten-thousandths, in turns of the event loop (thousands of tasks). */
async function storedScaledByTask(rows: readonly StoredOwnFigures[]): Promise<Map<string, ScaledTotals>> {
  const totals = new Map<string, ScaledTotals>();
  const pace = turns();
  for (const row of rows) {
    if (pace.due()) await pace.take();
    totals.set(row.task_id, storedScaled(row));
  }
  return totals;
}

const scaledOf = (finances: Map<string, TaskFinance>) => new Map([...finances].map(([id, finance]) => [id, computedScaled(finance.totals)]));

/** The own figures of the given tasks as they are: stored (what their breakdowns answer) when current, else computed. */
async function figuresBefore(db: Knex, teamId: string, project: ProjectRow, now: string, taskIds: readonly string[]) {
  const stored = await storedOwnFigures(db, teamId, project.id, taskIds, now);
  if (!stored.current || stored.rows.length !== new Set(taskIds).size) return scaledOf((await ownFigures(db, teamId, project, now, taskIds)).finances);
  return storedScaledByTask(stored.rows);
}

/** A task entry's costs (figures.ts: the summary's costs of labor), by the calculator's name. */
const COSTS = LABOR_COST_FIGURES.map((figure) => figure.key);
/**
 * The summary's amounts and hours, by the calculator's name: what a preview answers (its flag, whether a
 * rate is missing, is the breakdowns' and the list's to say, not a preview's).
 */
const FIGURES = AMOUNT_FIGURES.map((figure) => figure.key);

/** Each cost's JSON field name and colon, with its key. */
const COST_FIELDS = LABOR_COST_FIGURES.map((figure) => [`"${figure.name}":`, figure.key] as const);

/**
 * A task's entry of the answer (docs/finance-rules.md R18: id, name, and the four costs before and after),
 * rendered here as JSON text: thousands of them, each one string instead of a dozen objects for the
 * serializer to walk (the figures exact, whole ten-thousandths written as decimals).
 */
function taskEntryJson(task: { id: string; name: string }, before: ScaledTotals, after: ScaledTotals): string {
  const costs = (totals: ScaledTotals) => `{${COST_FIELDS.map(([field, key]) => `${field}${tenThousandthsText(totals[key])}`).join(',')}}`;
  return `{"id":${JSON.stringify(task.id)},"name":${JSON.stringify(task.name)},"before":${costs(before)},"after":${costs(after)}}`;
}

/** The unfiltered list's totals computed from every task's own figures (the stored ones are not current). */
async function computedProjectTotals(db: Knex, teamId: string, project: ProjectRow, now: string): Promise<TaskTotals> {
  const all = await ownFigures(db, teamId, project, now, 'all');
  const tree = all.tasks.map((task) => ({
    id: task.id,
    parentId: task.parent_task_id,
    billable: task.billable,
    totals: (all.finances.get(task.id) as TaskFinance).totals,
  }));
  const rolled = await rollUp(tree, () => true);
  return addTotals(all.tasks.filter((task) => task.parent_task_id === null).map((task) => rolled.get(task.id)?.totals as TaskTotals));
}

/** The ids of the project's non-archived tasks (`tasks`, all of them) under no archived ancestor (what the list counts). */
async function listedTaskIds(tasks: readonly FinanceTaskRow[]): Promise<Set<string>> {
  const live = new Map(tasks.map((task) => [task.id, task.parent_task_id]));
  const listed = new Set<string>();
  const isListed = (id: string, depth = 0): boolean => {
    if (listed.has(id)) return true;
    const parent = live.get(id);
    if (parent === undefined || depth > tasks.length) return false;
    const ok = parent === null || isListed(parent, depth + 1);
    if (ok) listed.add(id);
    return ok;
  };
  const pace = turns();
  for (const task of tasks) {
    if (pace.due()) await pace.take();
    isListed(task.id);
  }
  return listed;
}

/** Thrown to roll a transaction or a savepoint back once its result is known. */
class RolledBack<T> extends Error {
  constructor(readonly result: T) {
    super('rolled back');
  }
}

async function rolledBack<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>, config?: Knex.TransactionConfig): Promise<T> {
  try {
    await db.transaction(async (trx) => {
      throw new RolledBack(await work(trx));
    }, config);
  } catch (err) {
    if (err instanceof RolledBack) return err.result as T;
    throw err;
  }
  throw new Error('A rolled-back transaction committed');
}

/**
 * Step 1, in the caller's savepoint: the change written by the PUT's own code, the roles whose rates it
 * changes, and the tasks those rates cost (by what: logged time or an assignee's rate today).
 */
async function applyInSavepoint(savepoint: Knex, actor: Actor, project: ProjectRow, body: RateCardBody, now: string) {
  const { effectiveFrom, changedRoles: roles } = await applyRateCard(savepoint, actor, project, body);
  const costed = await tasksCostedAt(savepoint, actor.teamId, project.id, roles, effectiveFrom, now);
  return { effectiveFrom, costed, taskIds: [...new Set([...costed.logged, ...costed.assigned])] };
}

/** What a rate change does to the tasks it can change: each one's own figures before and after it. */
type Change = { effectiveFrom: string; tasks: readonly { id: string; name: string }[]; before: Map<string, ScaledTotals>; after: Map<string, ScaledTotals> };

/**
 * The change's figures from the stored figures (current in the transaction's snapshot): the cost
 * lines it can change (cost-changes.ts's costLinesChangedAt), read in the savepoint with the rates
 * after it and those before it, task by task; each task's logged hours and actual cost are its stored
 * ones less what its changed lines gave before plus what they give after, its estimate costed again
 * with today's rates after the change when an assignee's role today has a changed rate (calculator's
 * linesChangeDelta and estimateInMinorUnits, which give what a whole recomputation gives on the same
 * inputs). Only the lines the change can reach are read, not every member's every logged day
 * (BENCHMARKS.md, eighth and twelfth runs).
 *
 * The database reads the lines while the figures before and the estimates after are worked out here,
 * not after that work.
 */
async function changeFromStored(
  trx: Knex,
  actor: Actor,
  project: ProjectRow,
  projectTasks: readonly FinanceTaskRow[],
  body: RateCardBody,
  now: string,
): Promise<Change | undefined> {
  const teamId = actor.teamId;
  const ratesBefore = await rateEntries(trx, teamId, project.id);
  if (await pricesBeyondRoleCosts(trx, teamId, project.id)) return undefined;
  return rolledBack(trx, async (savepoint) => {
    const { effectiveFrom, costed, taskIds } = await applyInSavepoint(savepoint, actor, project, body, now);
    // The change's lines and estimates are costed at the roles' rates alone: a project with members' own
    // rates or with bill rates (before or after the change) is computed by the caller (changeComputed).
    if (await pricesBeyondRoleCosts(savepoint, teamId, project.id)) return undefined;
    const perDay = projectTasks[0]?.per_day ? toDecimal(projectTasks[0].per_day) : null;
    // The change writes no task: the project's tasks read before it, in creation order.
    const costedIds = new Set(taskIds);
    const tasks = projectTasks.filter((task) => costedIds.has(task.id));
    // The stored figures, which the change in this savepoint leaves as they were: the figures before.
    const [stored, assignees] = await Promise.all([
      storedOwnFigures(savepoint, teamId, project.id, taskIds, now),
      costed.assigned.length ? assigneesToday(savepoint, teamId, project.id, costed.assigned, now) : [],
    ]);
    // A live task without stored figures (its row removed by hand) is not worked from: the caller computes.
    if (stored.rows.length !== tasks.length) return undefined;
    // The lines asked for now, and read by the database while the figures before and the estimates are
    // worked out here (asked for together with the reads above, its batches would interleave with theirs).
    const lines = linesChangeByTask(costLinesChangedAt(savepoint, teamId, project.id, costed.logged, ratesBefore, now))[Symbol.asyncIterator]();
    const firstLines = lines.next();
    // Awaited below; failing meanwhile, it is not left unhandled.
    firstLines.catch(() => undefined);
    try {
      const before = await storedScaledByTask(stored.rows);
      const beforeOf = (taskId: string) => before.get(taskId) as ScaledTotals;
      const pace = turns();
      // The tasks whose estimates are costed again (an assignee's role today has a changed rate, and the
      // change takes effect by today) are in `estimated`; every other task's estimate costs as stored.
      const assigneesOf = lazyMembers(assignees);
      const estimated = new Map<string, bigint>();
      const assigned = new Set(costed.assigned);
      for (const task of tasks) {
        if (!assigned.has(task.id)) continue;
        if (pace.due()) await pace.take();
        const minorUnits = estimateInMinorUnits(
          { estimatedHours: toDecimal(task.estimated_hours), members: assigneesOf(task.id), perDay: task.per_day === null ? null : toDecimal(task.per_day) },
          project.currency,
        );
        estimated.set(task.id, tenThousandthsOfMinorUnits(minorUnits, project.currency));
      }
      // Logged hours and actual costs after: as stored, less the changed lines before, plus them after.
      const after = new Map<string, ScaledTotals>();
      for (let next = await firstLines; !next.done; next = await lines.next()) {
        const { taskId, changes } = next.value;
        const was = before.get(taskId);
        if (!was) continue;
        const delta = linesChangeDelta(changes, project.currency, perDay);
        after.set(
          taskId,
          scaledTaskTotals({
            ...was,
            loggedHours: was.loggedHours + tenThousandthsOfHundredths(delta.hundredths),
            actualLaborCost: was.actualLaborCost + tenThousandthsOfMinorUnits(delta.minorUnits, project.currency),
            estimatedLaborCost: estimated.get(taskId) ?? was.estimatedLaborCost,
          }),
        );
      }
      // The tasks whose logged lines the change leaves as they were: only their estimates change.
      for (const task of tasks) {
        if (after.has(task.id)) continue;
        if (pace.due()) await pace.take();
        const was = beforeOf(task.id);
        const estimate = estimated.get(task.id);
        after.set(task.id, estimate === undefined ? was : scaledTaskTotals({ ...was, estimatedLaborCost: estimate }));
      }
      return { effectiveFrom, tasks, before, after };
    } finally {
      // Stopped early (or failed): the lines' cursor closed, after the batch it was reading.
      await lines.return(undefined).catch(() => undefined);
    }
  });
}

/**
 * Whether a project's figures depend on more than its roles' cost rates (docs/finance-rules.md R20, R22):
 * a member's own rates, or a bill rate (the change's delta from stored figures reprices role costs only).
 */
async function pricesBeyondRoleCosts(db: Knex, teamId: string, projectId: string): Promise<boolean> {
  const result = await db.raw(
    `select exists (select 1 from project_member_rates where team_id = :teamId and project_id = :projectId)
            or exists (select 1 from project_rate_cards where team_id = :teamId and project_id = :projectId and bill_rate is not null) as beyond`,
    { teamId, projectId },
  );
  return Boolean(result.rows[0]?.beyond);
}

/** The change's figures computed from every input of the tasks it can change (the stored figures are not current). */
async function changeComputed(trx: Knex, actor: Actor, project: ProjectRow, body: RateCardBody, now: string): Promise<Change> {
  const changed = await rolledBack(trx, async (savepoint) => {
    const { effectiveFrom, taskIds } = await applyInSavepoint(savepoint, actor, project, body, now);
    return { effectiveFrom, taskIds, after: await ownFigures(savepoint, actor.teamId, project, now, taskIds) };
  });
  const before = await figuresBefore(trx, actor.teamId, project, now, changed.taskIds);
  return { effectiveFrom: changed.effectiveFrom, tasks: changed.after.tasks, before, after: scaledOf(changed.after.finances) };
}

/** How the preview is computed; tests take the longer way (changeComputed) with `fromStored` false. */
export const previewSettings = { fromStored: true };

export async function previewRateCard(db: Knex, actor: Actor, projectId: string, body: RateCardBody) {
  const now = nowIso();
  // The stored figures current first, so the snapshot below usually reads them instead of computing every task.
  await getProject(db, actor.teamId, projectId);
  await bringCurrent(db, actor.teamId, projectId, now);
  return rolledBack(
    db,
    async (trx) => {
      const project = await getProject(trx, actor.teamId, projectId);
      const stored = await storedProjectSums(trx, actor.teamId, projectId, now);
      const projectTasks = await tasksInScope(trx, actor.teamId, { kind: 'project', projectId });
      const fromStored = stored.current && previewSettings.fromStored ? await changeFromStored(trx, actor, project, projectTasks, body, now) : undefined;
      const change = fromStored ?? (await changeComputed(trx, actor, project, body, now));
      const listed = await listedTaskIds(projectTasks);
      const totalsBefore = stored.current ? storedTotals(stored) : await computedProjectTotals(trx, actor.teamId, project, now);
      // The listed tasks' differences added up, figure by figure, in whole ten-thousandths.
      const delta = Object.fromEntries(FIGURES.map((figure) => [figure, 0n])) as ScaledTotals;
      const tasks: string[] = ['['];
      const pace = turns();
      for (const task of change.tasks) {
        if (pace.due()) await pace.take();
        const was = change.before.get(task.id) as ScaledTotals;
        const is = change.after.get(task.id) as ScaledTotals;
        if (was === is) continue; // the change left every figure as it was
        if (listed.has(task.id)) for (const figure of FIGURES) delta[figure] += is[figure] - was[figure];
        if (COSTS.every((figure) => was[figure] === is[figure])) continue;
        tasks.push(tasks.length > 1 ? `,${taskEntryJson(task, was, is)}` : taskEntryJson(task, was, is));
      }
      tasks.push(']');
      const totalsAfter = { ...totalsBefore, ...Object.fromEntries(FIGURES.map((figure) => [figure, totalsBefore[figure].plus(decimalOfTenThousandths(delta[figure]))])) } as TaskTotals;
      return {
        project_id: project.id,
        currency: project.currency,
        effective_from: change.effectiveFrom,
        project_totals: { before: presentAmounts(totalsBefore), after: presentAmounts(totalsAfter) },
        // Thousands of tasks, rendered in the turns above, not in one go when the response is sent.
        tasks: JsonText.of(tasks),
      };
    },
    { isolationLevel: 'repeatable read' },
  );
}
