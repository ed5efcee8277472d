import { Decimal, ZERO, toDecimal } from './money';

/*
 * Budgets (docs/finance-rules.md R28): how much of a budget is used and which alert thresholds spent
 * reaches. Exact decimals only: a threshold is reached when spent x 100 >= budget x percent, compared
 * exactly (never through the rounded percentage), and a null or zero budget has no percentage and
 * reaches no threshold.
 */

export type BudgetKind = 'money' | 'hours';
export const BUDGET_KINDS: readonly BudgetKind[] = ['money', 'hours'];

/** Whether a budget can be used up: set and above zero. */
export const isActiveBudget = (budget: Decimal | null): budget is Decimal => budget !== null && budget.gt(ZERO);

/** What is left of the budget (negative when over it), or null for a null or zero budget. */
export function remainingOf(budget: Decimal | null, spent: Decimal): Decimal | null {
  return isActiveBudget(budget) ? budget.minus(spent) : null;
}

/** Spent as a percentage of the budget, rounded half away from zero to 2 decimals (may exceed 100), or null for a null or zero budget. */
export function percentUsedOf(budget: Decimal | null, spent: Decimal): Decimal | null {
  if (!isActiveBudget(budget)) return null;
  return spent.times(100).dividedBy(budget).toDecimalPlaces(2, Decimal.ROUND_HALF_UP);
}

/** Whether spent reaches `percent`% of the budget (exactly); never for a null or zero budget. */
export function reaches(budget: Decimal | null, spent: Decimal, percent: number): boolean {
  return isActiveBudget(budget) && spent.times(100).gte(budget.times(toDecimal(percent)));
}

/**
 * How much spent can still grow before it reaches a threshold it has not reached (R28.4): the lowest
 * such threshold's amount minus spent. Null when none is left to reach (or the budget is null or zero).
 */
export function headroomOf(budget: Decimal | null, spent: Decimal, percents: readonly number[]): Decimal | null {
  if (!isActiveBudget(budget)) return null;
  const open = percents.filter((percent) => !reaches(budget, spent, percent));
  if (open.length === 0) return null;
  return budget.times(toDecimal(Math.min(...open))).div(100).minus(spent);
}
