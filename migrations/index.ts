import type { Knex } from 'knex';
import * as initialSchema from './20261122_001_initial_schema';
import * as storedBreakdowns from './20261122_002_stored_breakdowns';
import * as figureStamps from './20261123_003_figure_stamps';
import * as datedCosting from './20261124_004_dated_costing';
import * as memberProjects from './20261125_005_member_projects';
import * as storedTotals from './20261125_006_stored_totals';
import * as inputMarks from './20261125_007_input_marks';
import * as coveringTotals from './20261125_008_covering_totals';
import * as newTaskMarks from './20261126_009_new_task_marks';
import * as laborFillfactor from './20261126_010_labor_fillfactor';
import * as listOrderIndexes from './20261127_011_list_order_indexes';
import * as tokenLifecycle from './20261127_012_token_lifecycle';
import * as events from './20261127_020_events';
import * as revenueRates from './20261128_022_revenue_rates';
import * as budgets from './20261128_023_budgets';
import * as revenueFigures from './20261128_024_revenue_figures';
import * as budgetSettles from './20261128_025_budget_settles';

type Migration = { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> };

/*
 * Migrations are listed in code rather than discovered on disk, so the same list runs from the
 * TypeScript sources (tests, tsx) and from the compiled build (npm start, Docker) alike.
 */
const migrations: ReadonlyArray<readonly [string, Migration]> = [
  ['20261122_001_initial_schema', initialSchema],
  ['20261122_002_stored_breakdowns', storedBreakdowns],
  ['20261123_003_figure_stamps', figureStamps],
  ['20261124_004_dated_costing', datedCosting],
  ['20261125_005_member_projects', memberProjects],
  ['20261125_006_stored_totals', storedTotals],
  ['20261125_007_input_marks', inputMarks],
  ['20261125_008_covering_totals', coveringTotals],
  ['20261126_009_new_task_marks', newTaskMarks],
  ['20261126_010_labor_fillfactor', laborFillfactor],
  ['20261127_011_list_order_indexes', listOrderIndexes],
  ['20261127_012_token_lifecycle', tokenLifecycle],
  ['20261127_020_events', events],
  ['20261128_022_revenue_rates', revenueRates],
  ['20261128_023_budgets', budgets],
  ['20261128_024_revenue_figures', revenueFigures],
  ['20261128_025_budget_settles', budgetSettles],
];

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => migrations.map(([name]) => name),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const found = migrations.find(([candidate]) => candidate === name);
    if (!found) throw new Error(`Unknown migration ${name}`);
    return found[1];
  },
};
