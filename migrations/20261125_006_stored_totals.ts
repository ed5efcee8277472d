import type { Knex } from 'knex';

/*
 * Each task's totals and variance stored as the calculator computed them (its taskTotals, rule 6, and
 * variance, rule 10), beside its labor figures in task_labor, and summed into its subtree's roll-ups
 * per kind like the other figures, so the project list's SQL only fetches and sums them: no rule is
 * restated in SQL. Unbounded numeric: exact whatever the labor costs' and fixed costs' scales.
 * The columns start empty. No figure is computed here (that needs the calculator, which a migration
 * must not depend on): the calculator's version changed with them, so every project's stamp is out of
 * date, no read answers from these rows before they are recomputed, and start-up recomputes them
 * (src/finance/figures.ts, refreshStaleProjects).
 */
const KINDS = ['billable', 'non_billable'] as const;
const FIGURES = ['total_estimated_cost', 'total_actual_cost', 'variance'] as const;

const COLUMNS = [...FIGURES, ...KINDS.flatMap((kind) => FIGURES.map((figure) => `tree_${kind}_${figure}`))];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('task_labor', (t) => {
    for (const column of COLUMNS) t.specificType(column, 'numeric');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('task_labor', (t) => {
    t.dropColumns(...COLUMNS);
  });
}
