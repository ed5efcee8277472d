import type { Knex } from 'knex';

/*
 * The stored figures of revenue and margin (docs/finance-rules.md R20-R25; src/finance/rules/figures.ts):
 * each task's own estimated and actual revenue, estimated and actual margin, and whether a rate is
 * missing (has_missing_rates, a small count: see the calculator's MISSING_ON_LOGS), beside its labor
 * figures in task_labor, each summed into its subtree's roll-ups per kind like the other figures; and
 * the breakdown's warnings as a stored part (warnings_json, like members_json); and the stamp's
 * `pricing` (project_figures): how the project priced when its figures were computed (hours of a day for
 * rates per day, whether it bills), whose change makes a refresh recompute every task.
 * The figure columns start at 0 and the part empty. No figure is computed here (that needs the
 * calculator, which a migration must not depend on): the calculator's version changed with them
 * (CALCULATOR_VERSION 5), so every project's stamp is out of date, no read answers from these rows
 * before they are recomputed, and start-up recomputes them (freshness.ts, refreshStaleProjects).
 */
const KINDS = ['billable', 'non_billable'] as const;
const FIGURES = ['estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin', 'has_missing_rates'] as const;

const COLUMNS = [...FIGURES, ...KINDS.flatMap((kind) => FIGURES.map((figure) => `tree_${kind}_${figure}`))];

export async function up(knex: Knex): Promise<void> {
  // One statement: a column with a constant default is added without rewriting the table.
  await knex.raw(
    `alter table task_labor ${[...COLUMNS.map((column) => `add column ${column} numeric not null default 0`), 'add column warnings_json text'].join(', ')}`,
  );
  await knex.raw('alter table project_figures add column pricing text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table project_figures drop column if exists pricing');
  await knex.raw(`alter table task_labor ${[...COLUMNS, 'warnings_json'].map((column) => `drop column if exists ${column}`).join(', ')}`);
}
