import type { Knex } from 'knex';
import type { Logger } from '../../logger';
import { dateIn, nowIso } from '../../clock';
import { recordEvent } from '../../events/events.repository';
import { BUDGET_KINDS, BudgetKind, headroomOf, isActiveBudget, reaches } from '../rules/budget';
import { Decimal, ZERO, toDecimal } from '../rules/money';
import { DayRange, Scope } from '../inputs/scope';
import { computeOwnFigures } from './labor';
import { stampBindings, stampOf } from './stamps';

/*
 * Budget thresholds crossed exactly once (docs/finance-rules.md R28.4, R28.5).
 *
 * A crossing is state, not a difference: budget_crossings holds, per project, kind, percentage and
 * period, the thresholds recorded as crossed. A settle computes spent now and reconciles: a threshold
 * spent reaches without a row is a crossing (a row and one budget.threshold_crossed event, in the
 * settle's transaction); a row whose threshold spent no longer reaches (or that is no longer asked
 * for) is deleted, so the threshold re-arms. A new month has no rows, so a monthly budget's
 * thresholds re-arm by themselves.
 *
 * When: a write to a budgeted project inserts a pending row (markBudget: what it changed, a few tasks
 * or the whole project) in its own transaction, and waits for nothing there. Right after it commits,
 * before it answers, writeTransaction settles the project (a time log: time-logs.service.ts). A
 * settle plans from one repeatable-read snapshot, without locks (the pending rows it sees, what they
 * changed, spent), then writes the plan under the project's budget lock (an advisory lock) unless
 * another settle wrote meanwhile (budget_watches.settled, a generation), in which case it plans
 * again. Settles of a project are thus written one at a time, each from a snapshot taken after the
 * previous one; writes landing together are taken by one settle, and the others find nothing left.
 * A settle that fails, or a write whose instance died after committing, leaves its rows, which the
 * background drain (drainer.ts), the next settle of the project, the budget read or the event feed's
 * read settles. Exactly once: the crossing rows are read and written only under the budget lock.
 *
 * A time log that cannot reach a threshold does not settle: its row holds an upper bound of what it
 * adds (time-logs.repository.ts's BUDGET_SKIP, against the headroom and the highest rate each settle
 * stores in budget_watches) and waits for the next settle. A log only adds to spent, so a crossing is
 * still recorded by the first write that may make it, which settles every waiting log with its own.
 *
 * What it costs: budget_shares holds each task's share of spent for the period and day of the
 * basis (budget_watches), and spent is their sum. A settle of writes that name their tasks (a time
 * log, a fixed cost) recomputes those tasks only (absolute shares, so a task settled twice is not
 * counted twice) and adds the differences; any other write, or the first settle of a day (a rate that
 * took effect at midnight), recomputes the whole project. On a project larger than
 * budgetSettings.backgroundTasks a whole recomputation takes long enough to be left to the background
 * drain rather than made before the write answers; the budget read and the event feed's read settle
 * it first.
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

type Share = Spent;

/**
 * Each task's share of what the project spent in the period (every non-archived task in `scope`;
 * archived ones and tasks of other projects are left out, their share being none), computed by the
 * calculator from its inputs at the instant `now`: for 'total' the unfiltered total_actual_cost (labor
 * and fixed costs) and logged_hours; for a month the actual labor cost and logged hours of the logs
 * whose day (project zone) lies in it, fixed costs left out.
 */
async function sharesIn(db: Knex, teamId: string, project: { id: string; currency: string }, period: BudgetPeriod, now: string, scope: Scope) {
  const range: DayRange = period.kind === 'month' ? { from: period.from as string, to: period.to as string } : {};
  const { finances } = await computeOwnFigures(db, teamId, project.currency, scope, now, range);
  const shares = new Map<string, Share>();
  for (const [taskId, { totals }] of finances) {
    shares.set(taskId, { money: period.kind === 'month' ? totals.actualLaborCost : totals.totalActualCost, hours: totals.loggedHours });
  }
  return shares;
}

const sum = (shares: Iterable<Share>): Spent => {
  let money = ZERO;
  let hours = ZERO;
  for (const share of shares) {
    money = money.plus(share.money);
    hours = hours.plus(share.hours);
  }
  return { money, hours };
};

/** What the project spent in the period, computed whole (R28.2). */
export async function spentIn(db: Knex, teamId: string, project: { id: string; currency: string }, period: BudgetPeriod, now: string): Promise<Spent> {
  return sum((await sharesIn(db, teamId, project, period, now, { kind: 'project', projectId: project.id })).values());
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
 * The key of the shares' basis: the period and the day (project zone) they were computed on, so the
 * first settle of each day computes the whole project again: what changed without a write (a rate
 * taking effect at midnight) is found by it.
 */
const basisKey = (period: BudgetPeriod, project: { time_zone: string }, now: string) => `${period.key} ${dateIn(project.time_zone, new Date(now))}`;

/**
 * backgroundTasks: a project with more non-archived tasks than this is recomputed whole by the
 * background drain, not before a write answers (tests make it small).
 */
export const budgetSettings = { backgroundTasks: 200 };

/** SQL and bindings of the project's budget lock: an advisory lock, apart from the refresh lock's keys (freshness.ts). */
export const budgetLock = (teamId: string, projectId: string) =>
  ['select pg_advisory_xact_lock(hashtext(?), hashtext(?))', [`budget ${teamId}`, projectId]] as const;

type Watch = { basis_key: string | null; spent_money: string | null; spent_hours: string | null; settled: string | number; max_rate: string | null };

/**
 * What a settle will write, worked out from one snapshot without any lock: the pending rows it takes,
 * each task's new share (all of the project's when `whole`), spent, and the settle generation of
 * budget_watches it was computed against (applySettle writes it only if no settle came between).
 */
type Plan = {
  project: BudgetProject;
  period: BudgetPeriod;
  key: string;
  now: string;
  generation: string | null;
  pendingIds: string[];
  whole: boolean;
  shares: Map<string, Share>;
  spent: Spent;
  /** The highest cost an hour of the project may have (null: not known). */
  maxRate: string | null;
};

/**
 * The highest cost rate an hour of the project has on any day, from its rate card and its members' own
 * rates (a day rate divided by the day's hours), 0 when none: a bound of what an hour logged can add.
 */
async function maxRateOf(trx: Knex, teamId: string, projectId: string): Promise<string> {
  const result = await trx.raw(
    `select coalesce(max(rate), 0) / (case when p.rate_unit = 'day' then p.hours_per_day else 1 end) as max_rate
     from projects p
     left join lateral (
       select hourly_rate as rate from project_rate_cards where team_id = p.team_id and project_id = p.id
       union all
       select hourly_rate from project_member_rates where team_id = p.team_id and project_id = p.id
     ) rates on true
     where p.team_id = ? and p.id = ?
     group by p.rate_unit, p.hours_per_day`,
    [teamId, projectId],
  );
  return String(result.rows[0]?.max_rate ?? '0');
}

/**
 * Each non-archived task's (of `taskIds`, or all) share of a 'total' budget taken from the stored figures (task_labor's own
 * total_actual_cost and logged_hours: what the calculator stored for it), the tasks marked out of date
 * computed by the calculator; undefined when the project's stored figures are not of its revision,
 * day and calculator version, or an input change is not yet worked out into marks (stale_inputs).
 * The background drain brings them current anyway, so a big project's whole recomputation costs a
 * read of them rather than the calculator's run over every task.
 */
async function storedShares(
  trx: Knex,
  teamId: string,
  project: BudgetProject,
  now: string,
  maxMarked: number,
  taskIds?: readonly string[],
): Promise<Map<string, Share> | undefined> {
  const bindings = { teamId, projectId: project.id, taskIds: taskIds?.join(',') ?? null, ...stampBindings(now) };
  const only = (column: string) => `(cast(:taskIds as text) is null or ${column} = any(string_to_array(:taskIds, ',')::uuid[]))`;
  const usable = (
    await trx.raw(
      `select ${stampOf('p')} and not exists (select 1 from stale_inputs si where si.team_id = p.team_id and si.project_id = p.id) as usable
       from projects p where p.team_id = :teamId and p.id = :projectId`,
      bindings,
    )
  ).rows[0]?.usable;
  if (!usable) return undefined;
  const marked: string[] = (
    await trx.raw(
      `select distinct sm.task_id from stale_tasks sm join tasks t on t.team_id = sm.team_id and t.id = sm.task_id
       where sm.team_id = :teamId and sm.project_id = :projectId and t.archived_at is null and t.project_id = :projectId and ${only('sm.task_id')}`,
      bindings,
    )
  ).rows.map((row: { task_id: string }) => row.task_id);
  if (marked.length > maxMarked) return undefined;
  // The marked tasks by the calculator; every other one as stored.
  const shares = marked.length > 0 ? await sharesIn(trx, teamId, project, TOTAL_PERIOD, now, { kind: 'tasks', projectId: project.id, taskIds: marked }) : new Map<string, Share>();
  const computed = new Set(marked);
  const stored: { task_id: string; money: string; hours: string }[] = (
    await trx.raw(
      `select l.task_id, l.total_actual_cost as money, l.logged_hours as hours
       from task_labor l join tasks t on t.team_id = l.team_id and t.id = l.task_id
       where l.team_id = :teamId and l.project_id = :projectId and t.project_id = :projectId and t.archived_at is null and ${only('l.task_id')}`,
      bindings,
    )
  ).rows;
  for (const row of stored) if (!computed.has(row.task_id)) shares.set(row.task_id, { money: toDecimal(row.money), hours: toDecimal(row.hours) });
  return shares;
}

/**
 * Plans a settle in a repeatable-read snapshot: none when there is nothing pending (and `read` was not
 * asked for), 'deferred' when the project's whole recomputation is left to the background (`deferBig`
 * and more than budgetSettings.backgroundTasks tasks). A write committed after the snapshot keeps
 * its pending row for the next settle; shares are absolute, so a task computed again is not counted twice.
 */
async function planSettle(db: Knex, teamId: string, projectId: string, options: SettleOptions) {
  const where = { team_id: teamId, project_id: projectId };
  return db.transaction(
    async (trx): Promise<Plan | 'none' | 'deferred'> => {
      const pending: { id: string | number; task_ids: string[] | null; marked_at: Date }[] = await trx('budget_pending').where(where).select('id', 'task_ids', 'marked_at');
      if (pending.length === 0 && !options.read) return 'none';
      const project: BudgetProject | undefined = await trx('projects').where({ team_id: teamId, id: projectId }).first(PROJECT_BUDGET_COLUMNS);
      if (!project) return 'none';
      const now = nowIso();
      const period = currentPeriod(project, now);
      const key = basisKey(period, project, now);
      const watch: Watch | undefined = await trx('budget_watches').where(where).first('basis_key', 'spent_money', 'spent_hours', 'settled', 'max_rate');
      const base = { project, period, key, now, generation: watch ? String(watch.settled) : null, pendingIds: pending.map((row) => String(row.id)) };
      if (!hasBudget(project)) return { ...base, whole: true, shares: new Map(), spent: { money: ZERO, hours: ZERO }, maxRate: null };
      const whole = !watch || watch.basis_key !== key || watch.spent_money === null || watch.spent_hours === null || pending.some((row) => row.task_ids === null);
      if (whole) {
        const limit = options.deferBig ? budgetSettings.backgroundTasks : Infinity;
        const stored = period.kind === 'total' ? await storedShares(trx, teamId, project, now, limit) : undefined;
        if (stored) return { ...base, whole, shares: stored, spent: sum(stored.values()), maxRate: await maxRateOf(trx, teamId, projectId) };
        const patient = options.patienceMs === undefined || pending.every((row) => Date.parse(now) - new Date(row.marked_at).getTime() < (options.patienceMs as number));
        if (options.deferBig && patient) {
          const tasks = await trx('tasks').where(where).whereNull('archived_at').count({ count: '*' }).first();
          if (Number(tasks?.count ?? 0) > budgetSettings.backgroundTasks) return 'deferred';
        }
        const shares = await sharesIn(trx, teamId, project, period, now, { kind: 'project', projectId });
        return { ...base, whole, shares, spent: sum(shares.values()), maxRate: await maxRateOf(trx, teamId, projectId) };
      }
      const taskIds = [...new Set(pending.flatMap((row) => row.task_ids ?? []))];
      const fromStore = period.kind === 'total' && taskIds.length > 0 ? await storedShares(trx, teamId, project, now, Infinity, taskIds) : undefined;
      const shares = fromStore ?? (taskIds.length > 0 ? await sharesIn(trx, teamId, project, period, now, { kind: 'tasks', projectId, taskIds }) : new Map<string, Share>());
      for (const taskId of taskIds) if (!shares.has(taskId)) shares.set(taskId, { money: ZERO, hours: ZERO });
      const stored: { money: string; hours: string }[] = taskIds.length > 0 ? await trx('budget_shares').where(where).whereIn('task_id', taskIds).select('money', 'hours') : [];
      const before = sum(stored.map((row) => ({ money: toDecimal(row.money), hours: toDecimal(row.hours) })));
      const after = sum(shares.values());
      const spent = {
        money: toDecimal(watch.spent_money as string).plus(after.money).minus(before.money),
        hours: toDecimal(watch.spent_hours as string).plus(after.hours).minus(before.hours),
      };
      // Rates change only by writes that make a whole recomputation: the bound found with the basis holds.
      return { ...base, whole, shares, spent, maxRate: watch.max_rate === null ? null : String(watch.max_rate) };
    },
    { isolationLevel: 'repeatable read' },
  );
}

/**
 * Writes a plan under the project's budget lock, if no settle came between (the generation it was
 * computed against is still budget_watches'): takes its pending rows, stores its shares and spent,
 * and reconciles the crossings. False: another settle came between, plan again.
 */
async function applySettle(db: Knex, teamId: string, plan: Plan): Promise<Crossing[] | false> {
  const projectId = plan.project.id;
  const where = { team_id: teamId, project_id: projectId };
  return db.transaction(async (trx) => {
    await trx.raw(...budgetLock(teamId, projectId));
    const watch: Pick<Watch, 'settled'> | undefined = await trx('budget_watches').where(where).first('settled');
    if ((watch ? String(watch.settled) : null) !== plan.generation) return false;
    if (plan.pendingIds.length > 0) await trx('budget_pending').where(where).whereIn('id', plan.pendingIds).delete();
    const watched = hasBudget(plan.project);
    const taskIds = [...plan.shares.keys()];
    if (plan.whole) await trx('budget_shares').where(where).delete();
    else if (taskIds.length > 0) await trx('budget_shares').where(where).whereIn('task_id', taskIds).delete();
    const kept = [...plan.shares].filter(([, share]) => !plan.whole || !share.money.isZero() || !share.hours.isZero());
    for (let from = 0; from < kept.length; from += 5000) {
      const chunk = kept.slice(from, from + 5000);
      await trx.raw(
        `insert into budget_shares (team_id, project_id, task_id, money, hours)
         select :teamId, :projectId, unnest(string_to_array(:ids, ',')::uuid[]), unnest(string_to_array(:money, ',')::numeric[]), unnest(string_to_array(:hours, ',')::numeric[])`,
        {
          teamId,
          projectId,
          ids: chunk.map(([id]) => id).join(','),
          money: chunk.map(([, share]) => share.money.toFixed()).join(','),
          hours: chunk.map(([, share]) => share.hours.toFixed()).join(','),
        },
      );
    }
    const headroom = (kind: BudgetKind) => headroomOf(budgetOf(plan.project, kind), plan.spent[kind], plan.project.budget_alerts)?.toFixed() ?? null;
    const basis = watched
      ? [plan.key, plan.spent.money.toFixed(), plan.spent.hours.toFixed(), plan.maxRate, headroom('money'), headroom('hours')]
      : [null, null, null, null, null, null];
    await trx.raw(
      `insert into budget_watches (team_id, project_id, basis_key, spent_money, spent_hours, max_rate, headroom_money, headroom_hours, settled)
       values (?, ?, ?, ?, ?, ?, ?, ?, 1)
       on conflict (team_id, project_id) do update set basis_key = excluded.basis_key, spent_money = excluded.spent_money,
         spent_hours = excluded.spent_hours, max_rate = excluded.max_rate, headroom_money = excluded.headroom_money,
         headroom_hours = excluded.headroom_hours, settled = budget_watches.settled + 1`,
      [teamId, projectId, ...basis],
    );
    return reconcile(trx, teamId, plan.project, plan.period, plan.spent, plan.now);
  });
}

/**
 * Reconciles the project's crossings with spent at the instant `now` (R28.4), in the caller's
 * transaction, which holds the project's budget lock: records each crossing once (a budget_crossings
 * row and a budget.threshold_crossed event) and re-arms the thresholds spent fell below. Returns
 * the crossings now recorded in the period.
 */
async function reconcile(trx: Knex, teamId: string, project: BudgetProject, period: BudgetPeriod, spent: Spent, now: string): Promise<Crossing[]> {
  const projectId = project.id;
  // The current period's rows; a monthly budget keeps its past months' rows as history, and a 'total'
  // row left from before a switch to months is stale (deleted below: it matches no threshold).
  const keys = period.kind === 'month' ? ['total', period.key] : ['total'];
  const rows: CrossingRow[] = await trx('budget_crossings')
    .where({ team_id: teamId, project_id: projectId })
    .whereIn('period_key', keys)
    .select('kind', 'percent', 'crossed_at', 'period_key');
  const watched = hasBudget(project);
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
  return kept;
}

export type Settled = { project: BudgetProject; period: BudgetPeriod; spent: Spent; crossings: Crossing[] };

type SettleOptions = { read?: boolean; deferBig?: boolean; patienceMs?: number; own?: readonly string[] };

/**
 * Settles the project (R28.5): plans from a snapshot, then writes the plan under the project's budget
 * lock unless another settle came between (then plans again, finding what that one took gone).
 * `read`: a budget read, which evaluates even with nothing pending (a new day or month) and answers
 * what it found; otherwise nothing is done without pending rows. `deferBig`: a whole recomputation of
 * a big project is left to the background (nothing taken, undefined answered), unless the stored
 * figures serve (storedShares); with `patienceMs` (the background's own), only while every pending
 * row is younger than that. `own`: a write's pending rows, done with once another settle took them.
 */
export async function settleBudget(db: Knex, teamId: string, projectId: string, options: SettleOptions = {}): Promise<Settled | undefined> {
  for (;;) {
    const plan = await planSettle(db, teamId, projectId, options);
    if (plan === 'none' || plan === 'deferred') return undefined;
    // A write's own pending rows taken by a settle that came first: it is settled.
    if (options.own && !options.own.some((id) => plan.pendingIds.includes(id))) return undefined;
    // A read that finds its basis current and nothing pending has nothing to write.
    if (plan.pendingIds.length === 0 && !plan.whole) {
      return { project: plan.project, period: plan.period, spent: plan.spent, crossings: await crossingsIn(db, teamId, projectId, plan.period.key) };
    }
    const crossings = await applySettle(db, teamId, plan);
    if (crossings) return { project: plan.project, period: plan.period, spent: plan.spent, crossings };
  }
}

/**
 * Settles every project of the team (or of every team) that has pending rows: the event feed's read.
 * `background`: the drain's, which settles a project whose rows are all time logs that could not
 * reach a threshold (they may wait, R28.5) only once `waitingAtLeast` have gathered or their bounds
 * together reach the headroom, and leaves a
 * big project's whole recomputation for `patienceMs` to the refresh that makes its stored figures
 * current (then storedShares serves).
 */
export async function settlePending(db: Knex, teamId?: string, background?: { waitingAtLeast: number; patienceMs: number }): Promise<void> {
  // Time logs that waited side by side, each not seeing the other's mark, may together reach the
  // headroom: those are settled at once too, not when enough have gathered.
  const query = db('budget_pending as bp')
    .leftJoin('budget_watches as w', (on) => on.on('w.team_id', 'bp.team_id').andOn('w.project_id', 'bp.project_id'))
    .select('bp.team_id', 'bp.project_id')
    .groupBy('bp.team_id', 'bp.project_id', 'w.headroom_money', 'w.headroom_hours')
    .havingRaw(
      'bool_or(bp.upper_money is null) or count(*) >= ? or sum(bp.upper_money) >= w.headroom_money or sum(bp.upper_hours) >= w.headroom_hours',
      [background?.waitingAtLeast ?? 0],
    );
  if (teamId !== undefined) query.where('bp.team_id', teamId);
  const options = background ? { deferBig: true, patienceMs: background.patienceMs } : {};
  for (const row of (await query) as { team_id: string; project_id: string }[]) await settleBudget(db, row.team_id, row.project_id, options);
}

/** Per write transaction: the budgeted projects it marked, with their team and the pending rows it inserted, to settle once it commits. */
const markedByTransaction = new WeakMap<Knex, Map<string, Marked>>();

type Marked = { teamId: string; own: string[] };

/**
 * Called by the lock helpers of freshness.ts (and by a budget change) once the project's row is held,
 * for a budgeted project: records in the write's transaction that the project's budget is to be
 * settled, for the write's tasks (`taskIds`: it changes only their own figures, a time log or a fixed
 * cost) or for the whole project, and has writeTransaction settle it after the commit.
 */
export async function markBudget(db: Knex, teamId: string, projectId: string, taskIds?: readonly string[]): Promise<void> {
  const result = await db.raw('insert into budget_pending (team_id, project_id, task_ids, marked_at) values (?, ?, ?::uuid[], ?) returning id', [
    teamId,
    projectId,
    taskIds ? `{${taskIds.join(',')}}` : null,
    nowIso(),
  ]);
  const trx = db as Knex.Transaction;
  if (!trx.isTransaction) return;
  const marked = markedByTransaction.get(trx) ?? new Map<string, Marked>();
  markedByTransaction.set(trx, marked);
  const entry = marked.get(projectId) ?? { teamId, own: [] };
  entry.own.push(String(result.rows[0].id));
  marked.set(projectId, entry);
}

/**
 * A write's transaction: `work` in a transaction, then, once it has committed, the budgets it marked
 * settled before the write answers (R28.5). The write stands whatever the settle meets: a settle that
 * fails leaves its pending rows for the next one (the background drain's, or a read's).
 */
export async function writeTransaction<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  let marked: Map<string, Marked> | undefined;
  const result = await db.transaction(async (trx) => {
    const value = await work(trx);
    marked = markedByTransaction.get(trx);
    return value;
  });
  if (marked) await settleAfterWrite(db, marked);
  return result;
}

/** Where each connection pool's failed settles after a write are reported (app.ts). */
const settleLoggers = new WeakMap<Knex, Logger>();
export function reportSettleFailures(db: Knex, logger: Logger): void {
  settleLoggers.set(db, logger);
}

/**
 * Settles the projects a committed write marked, until its own pending rows are taken. A failure is
 * logged and leaves them pending: the write stands, and the next settle (a read's, the drain's) takes them.
 */
export async function settleAfterWrite(db: Knex, marked: ReadonlyMap<string, Marked>): Promise<void> {
  for (const [projectId, { teamId, own }] of marked) {
    await settleBudget(db, teamId, projectId, { deferBig: true, own }).catch((err: unknown) => {
      // Cancelled because the write's client left (57014): expected, and the drain settles it.
      const level = (err as { code?: string }).code === '57014' ? 'debug' : 'warn';
      settleLoggers.get(db)?.[level]({ err, teamId, projectId }, 'settling a budget after a write failed: left pending for the next settle');
    });
  }
}
