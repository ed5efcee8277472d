import type { Knex } from 'knex';
import { dateIn, nowIso } from '../../clock';
import { recordEvent } from '../../events/events.repository';
import { BUDGET_KINDS, BudgetKind, isActiveBudget, reaches } from '../rules/budget';
import { Decimal, ZERO, toDecimal } from '../rules/money';
import { DayRange, Scope } from '../inputs/scope';
import { computeOwnFigures } from './labor';

/*
 * Budget thresholds crossed exactly once (docs/finance-rules.md R28.4, R28.5).
 *
 * A crossing is state, not a difference: budget_crossings holds, per project, kind, percentage and
 * period, the thresholds recorded as crossed. An evaluation (settleBudgets) computes spent now and
 * reconciles: a threshold spent reaches without a row is a crossing (a row and one
 * budget.threshold_crossed event, in the evaluating transaction); a row whose threshold spent no
 * longer reaches (or that is no longer asked for) is deleted, so the threshold re-arms. A new month
 * has no rows, so a monthly budget's thresholds re-arm by themselves.
 *
 * Exactly once: every write to a budgeted project takes the project's row (freshness.ts's lock
 * helpers, which call watchBudgets) and then the project's budget_watches row, for update, until
 * it commits; it evaluates when it commits, after its own changes, under that lock. Evaluations of a
 * project therefore run one at a time, and each runs in a statement snapshot taken after the lock was
 * granted (READ COMMITTED): it sees every write that evaluated before it, and its own. Of two writes
 * that together take spent past a threshold, the second to evaluate sees both; the first finds no row
 * and records it, the second finds the row. An evaluation compares spent with the rows, not with the
 * write's change, so nothing depends on which write caused what, and a change no write evaluated (a
 * new month, a rate stored by other means) is recorded by the next write's or budget read's evaluation.
 *
 * What it costs: an evaluation computes the whole project's spent (its tasks' own figures, by the
 * calculator) and keeps it in budget_watches as the basis, keyed by the period and the day. A write to
 * some tasks' own figures only (a time log, a fixed cost) reads those tasks' share of spent when it
 * takes the lock and again at commit, and adds the difference to the basis: a few tasks, not the
 * project. The first such write of a day (project zone), or any other write or a budget read, computes
 * the whole project again.
 *
 * Projects without an active budget (none set, zero, or no alert percentages) do nothing of this:
 * the lock helpers check the row they already hold (hasBudget), and the time log's statement checks
 * it in SQL (budgetedSql).
 */

/** The columns of a project a budget is read from. */
export type BudgetColumns = {
  budget: string | null;
  hours_budget: string | null;
  budget_period: 'total' | 'month';
  budget_alerts: number[];
};

/** Whether the project has a budget to watch: money or hours above zero, and at least one alert percentage. */
export function hasBudget(project: Pick<BudgetColumns, 'budget' | 'hours_budget' | 'budget_alerts'>): boolean {
  const active = (value: string | null) => isActiveBudget(value === null ? null : toDecimal(value));
  return (active(project.budget) || active(project.hours_budget)) && project.budget_alerts.length > 0;
}

/** SQL: hasBudget of the projects row (or CTE row) `alias`, which holds budget, hours_budget and budget_alerts. */
export const budgetedSql = (alias: string) =>
  `((coalesce(${alias}.budget, 0) > 0 or coalesce(${alias}.hours_budget, 0) > 0) and cardinality(${alias}.budget_alerts) > 0)`;

/** A budget period: 'total' (key 'total', no days), or a month in the project's zone (key 'YYYY-MM', its first and last day). */
export type BudgetPeriod = { kind: 'total' | 'month'; key: string; from: string | null; to: string | null };

/** The month `month` (YYYY-MM) as a period. */
export function monthPeriod(month: string): BudgetPeriod {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const lastDay = new Date(Date.UTC(year, mon, 0)).getUTCDate();
  return { kind: 'month', key: month, from: `${month}-01`, to: `${month}-${String(lastDay).padStart(2, '0')}` };
}

export const TOTAL_PERIOD: BudgetPeriod = { kind: 'total', key: 'total', from: null, to: null };

/** The project's current period at the instant `now`: its whole life, or the month of today in its time zone. */
export function currentPeriod(project: { budget_period: string; time_zone: string }, now: string): BudgetPeriod {
  return project.budget_period === 'month' ? monthPeriod(dateIn(project.time_zone, new Date(now)).slice(0, 7)) : TOTAL_PERIOD;
}

export type Spent = { money: Decimal; hours: Decimal };

/**
 * What the project spent in the period (with `taskIds`, those tasks' share of it), computed by the
 * calculator from its inputs at the instant `now` (figures of non-archived tasks): for 'total' the unfiltered total_actual_cost (labor and fixed
 * costs) and logged_hours; for a month the actual labor cost and logged hours of the logs whose day
 * (project zone) lies in it, fixed costs left out.
 */
export async function spentIn(
  db: Knex,
  teamId: string,
  project: { id: string; currency: string },
  period: BudgetPeriod,
  now: string,
  taskIds?: readonly string[],
): Promise<Spent> {
  const range: DayRange = period.kind === 'month' ? { from: period.from as string, to: period.to as string } : {};
  const scope: Scope = taskIds ? { kind: 'tasks', projectId: project.id, taskIds } : { kind: 'project', projectId: project.id };
  const { finances } = await computeOwnFigures(db, teamId, project.currency, scope, now, range);
  let money = ZERO;
  let hours = ZERO;
  for (const { totals } of finances.values()) {
    money = money.plus(period.kind === 'month' ? totals.actualLaborCost : totals.totalActualCost);
    hours = hours.plus(totals.loggedHours);
  }
  return { money, hours };
}

export type Crossing = { kind: BudgetKind; percent: number; crossed_at: Date };
type CrossingRow = Crossing & { period_key: string };

export type BudgetProject = BudgetColumns & { id: string; currency: string; time_zone: string };

const PROJECT_BUDGET_COLUMNS = ['id', 'currency', 'time_zone', 'budget', 'hours_budget', 'budget_period', 'budget_alerts'];

export const budgetOf = (project: Pick<BudgetColumns, 'budget' | 'hours_budget'>, kind: BudgetKind): Decimal | null => {
  const value = kind === 'money' ? project.budget : project.hours_budget;
  return value === null ? null : toDecimal(value);
};

/** The thresholds recorded as crossed in a period of the project. */
export async function crossingsIn(db: Knex, teamId: string, projectId: string, periodKey: string): Promise<Crossing[]> {
  return db('budget_crossings').where({ team_id: teamId, project_id: projectId, period_key: periodKey }).select('kind', 'percent', 'crossed_at');
}

/**
 * What the last evaluation found spent in its period: the basis a write to some tasks adds their
 * change to. Keyed by the period and the day (project zone) it was computed on, so the first write
 * of each day computes the whole project again: what changed without a write (a rate stored by other
 * means, a midnight) is found by it.
 */
const basisKey = (period: BudgetPeriod, project: { time_zone: string }, now: string) => `${period.key} ${dateIn(project.time_zone, new Date(now))}`;

type Basis = { basis_key: string | null; spent_money: string | null; spent_hours: string | null };

/**
 * Takes the project's budget lock (its budget_watches row, for update, created on first use) in the
 * caller's transaction: after the project's row, per the lock order (docs/architecture.md). Returns
 * the basis the row holds.
 */
async function lockWatch(trx: Knex, teamId: string, projectId: string): Promise<Basis> {
  const lock = async (): Promise<Basis | undefined> =>
    (await trx.raw('select basis_key, spent_money, spent_hours from budget_watches where team_id = ? and project_id = ? for update', [teamId, projectId]))
      .rows[0];
  const found = await lock();
  if (found) return found;
  await trx.raw('insert into budget_watches (team_id, project_id) values (?, ?) on conflict do nothing', [teamId, projectId]);
  return (await lock()) as Basis;
}

/**
 * A write to some tasks' own figures (a time log, a fixed cost) on a project whose basis is of the
 * current period: those tasks' share of spent before the write, so that at commit spent is the basis
 * plus what their share became, not the whole project computed again.
 */
type Increment = { basisKey: string; basis: Spent; taskIds: readonly string[]; before: Spent; project: BudgetProject };

/** Spent in the period: the basis plus the written tasks' change (an Increment of this period), else the whole project computed. */
async function spentNow(trx: Knex, teamId: string, project: BudgetProject, period: BudgetPeriod, now: string, increment?: Increment): Promise<Spent> {
  if (!increment || increment.basisKey !== basisKey(period, project, now)) return spentIn(trx, teamId, project, period, now);
  const after = await spentIn(trx, teamId, project, period, now, increment.taskIds);
  return {
    money: increment.basis.money.plus(after.money).minus(increment.before.money),
    hours: increment.basis.hours.plus(after.hours).minus(increment.before.hours),
  };
}

/**
 * Evaluates the project's thresholds at the instant `now` in the caller's transaction, which holds the
 * project's row and its budget lock (watchBudgets, or the budget read): records each crossing once
 * (a budget_crossings row and a budget.threshold_crossed event) and re-arms the thresholds spent fell
 * below. Returns the period, what was spent and the crossings now recorded in it.
 */
export async function settleBudgets(trx: Knex, teamId: string, projectId: string, now: string, increment?: Increment) {
  // A write to some tasks' own figures held the project's row shared since it read it: it is as read.
  const project: BudgetProject | undefined =
    increment?.project ?? (await trx('projects').where({ team_id: teamId, id: projectId }).first(PROJECT_BUDGET_COLUMNS));
  if (!project) return undefined;
  const period = currentPeriod(project, now);
  // The current period's rows; a monthly budget keeps its past months' rows as history, and a 'total'
  // row left from before a switch to months is stale (deleted below: it matches no threshold).
  const keys = period.kind === 'month' ? ['total', period.key] : ['total'];
  const rows: CrossingRow[] = await trx('budget_crossings')
    .where({ team_id: teamId, project_id: projectId })
    .whereIn('period_key', keys)
    .select('kind', 'percent', 'crossed_at', 'period_key');
  const watched = hasBudget(project);
  const spent = watched ? await spentNow(trx, teamId, project, period, now, increment) : { money: ZERO, hours: ZERO };
  await trx('budget_watches')
    .where({ team_id: teamId, project_id: projectId })
    .update(watched ? { basis_key: basisKey(period, project, now), spent_money: spent.money.toFixed(), spent_hours: spent.hours.toFixed() } : { basis_key: null, spent_money: null, spent_hours: null });
  const kept: Crossing[] = [];
  const held = new Set<CrossingRow>();
  for (const kind of BUDGET_KINDS) {
    const budget = budgetOf(project, kind);
    for (const percent of watched ? project.budget_alerts : []) {
      const row = rows.find((r) => r.period_key === period.key && r.kind === kind && r.percent === percent);
      const reached = reaches(budget, spent[kind], percent);
      if (reached && row) {
        held.add(row);
        kept.push(row);
      }
      if (reached && !row) {
        const crossed = { kind, percent, crossed_at: new Date(now) };
        await trx('budget_crossings').insert({ team_id: teamId, project_id: projectId, kind, percent, period_key: period.key, crossed_at: now });
        await recordEvent(trx, teamId, 'budget.threshold_crossed', {
          project_id: projectId,
          kind,
          percent,
          budget,
          spent: spent[kind],
          period: { kind: period.kind, from: period.from, to: period.to },
        });
        kept.push(crossed);
      }
    }
  }
  for (const row of rows.filter((r) => !held.has(r))) {
    await trx('budget_crossings').where({ team_id: teamId, project_id: projectId, period_key: row.period_key, kind: row.kind, percent: row.percent }).delete();
  }
  return { project, period, spent, crossings: kept };
}

/**
 * A budget read's evaluation (the current period of a budgeted project): in a transaction of its own,
 * the project's row shared and then its budget lock, as a write takes them, so a threshold that a rate
 * taking effect at midnight has reached is recorded by the first read after it, once.
 */
export async function settleOnRead(db: Knex, teamId: string, projectId: string, now: string) {
  return db.transaction(async (trx) => {
    await trx.raw('select 1 from projects where team_id = ? and id = ? for share', [teamId, projectId]);
    await lockWatch(trx, teamId, projectId);
    return settleBudgets(trx, teamId, projectId, now);
  });
}

/** A project a transaction watches: its team, and the increment of a write to some tasks only (none: the whole project is computed). */
type Watch = { teamId: string; increment: Increment | undefined };

/** Per transaction: the budgeted projects it locked, to evaluate when it commits. */
const watchedByTransaction = new WeakMap<Knex, Map<string, Watch>>();

/**
 * Called by the lock helpers of freshness.ts (and by a budget change) once the project's row is
 * held, for a budgeted project: takes the project's budget lock and makes the transaction evaluate
 * the project's thresholds (settleBudgets) when it commits, after the write's own changes, whatever
 * the write. `taskIds`: the write changes only those tasks' own figures (a time log, a fixed cost),
 * whose share of spent is read now, before the write, so the evaluation computes only theirs again.
 * Outside a transaction there is no commit to evaluate at, and nothing is done.
 */
export async function watchBudgets(db: Knex, teamId: string, projectId: string, taskIds?: readonly string[], locked?: BudgetProject): Promise<void> {
  const trx = db as Knex.Transaction;
  if (!trx.isTransaction) return;
  let watched = watchedByTransaction.get(trx);
  const known = watched?.get(projectId);
  if (known) {
    // A second write in the transaction: the whole project is computed at commit.
    known.increment = undefined;
    return;
  }
  const basis = await lockWatch(trx, teamId, projectId);
  const increment = taskIds && basis.basis_key !== null ? await incrementOf(trx, teamId, projectId, basis, taskIds, locked) : undefined;
  if (!watched) {
    const projects = new Map<string, Watch>();
    watched = projects;
    watchedByTransaction.set(trx, projects);
    // knex commits a transaction callback's result through the transactor's commit: evaluating
    // first puts the crossings in the same transaction, and an error there rolls it all back.
    const commit = trx.commit.bind(trx);
    trx.commit = (async (value?: unknown) => {
      const now = nowIso();
      for (const [id, watch] of projects) await settleBudgets(trx, watch.teamId, id, now, watch.increment);
      return commit(value);
    }) as typeof trx.commit;
  }
  watched.set(projectId, { teamId, increment });
}

/** The tasks' share of spent before a write, when the basis is of the current period (else none: the whole project is computed). */
async function incrementOf(
  trx: Knex,
  teamId: string,
  projectId: string,
  basis: Basis,
  taskIds: readonly string[],
  locked?: BudgetProject,
): Promise<Increment | undefined> {
  const project: BudgetProject | undefined = locked ?? (await trx('projects').where({ team_id: teamId, id: projectId }).first(PROJECT_BUDGET_COLUMNS));
  if (!project || basis.spent_money === null || basis.spent_hours === null) return undefined;
  const now = nowIso();
  const period = currentPeriod(project, now);
  const key = basisKey(period, project, now);
  if (key !== basis.basis_key) return undefined;
  const before = await spentIn(trx, teamId, project, period, now, taskIds);
  return { basisKey: key, basis: { money: toDecimal(basis.spent_money), hours: toDecimal(basis.spent_hours) }, taskIds, before, project };
}
