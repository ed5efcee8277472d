import type { Knex } from 'knex';
import { nowIso } from '../clock';
import { getProject } from '../projects/projects.service';
import { BUDGET_KINDS, percentUsedOf, remainingOf } from '../finance/rules/budget';
import { Crossing, budgetOf, crossingsIn, currentPeriod, hasBudget, monthPeriod, settleBudget, spentIn } from '../finance/read-model/budget-watch';

/**
 * GET /api/projects/:id/budget (docs/api.md "Budgets"; docs/finance-rules.md R28): what the
 * project spent in the period against each budget, and its alerts. The current period of a budgeted
 * project is evaluated first (crossings recorded, thresholds re-armed), so the answer and the feed
 * agree; a past month answers the crossings recorded in it.
 */
export async function getBudget(db: Knex, teamId: string, projectId: string, month: string | undefined) {
  const now = nowIso();
  const found = await getProject(db, teamId, projectId);
  const current = currentPeriod(found, now);
  const period = found.budget_period === 'month' && month !== undefined ? monthPeriod(month) : current;
  let project = found;
  let spent;
  let crossings: Crossing[];
  const settled = period.key === current.key && hasBudget(found) ? await settleBudget(db, teamId, projectId, { read: true }) : undefined;
  if (settled && settled.period.key === period.key) {
    ({ spent, crossings } = settled);
    project = { ...found, ...settled.project };
  } else {
    [spent, crossings] = await Promise.all([spentIn(db, teamId, found, period, now), crossingsIn(db, teamId, projectId, period.key)]);
  }
  const use = (kind: (typeof BUDGET_KINDS)[number]) => {
    const budget = budgetOf(project, kind);
    return { budget, spent: spent[kind], remaining: remainingOf(budget, spent[kind]), percent_used: percentUsedOf(budget, spent[kind]) };
  };
  const alerts = BUDGET_KINDS.filter((kind) => budgetOf(project, kind) !== null).flatMap((kind) =>
    project.budget_alerts.map((percent) => {
      const crossing = crossings.find((c) => c.kind === kind && c.percent === percent);
      return { kind, percent, crossed: crossing !== undefined, crossed_at: crossing?.crossed_at ?? null };
    }),
  );
  return {
    project_id: project.id,
    currency: project.currency,
    period: { kind: period.kind, from: period.from, to: period.to },
    money: use('money'),
    hours: use('hours'),
    alerts,
  };
}
