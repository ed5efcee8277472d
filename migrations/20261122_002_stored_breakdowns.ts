import type { Knex } from 'knex';

/*
 * Stored beside each task's labor figures (task_labor), refreshed by the same writes (labor.ts):
 *   - the breakdown parts that depend on its members (member entries, role groups, the assignees a list
 *     row shows), as JSON text, so a breakdown reads one row however many members a task has. Text, not
 *     json/jsonb: the exact decimal literals and the field order are kept as written, and no driver
 *     parses them into floats;
 *   - its subtree's roll-up (itself and its non-archived descendants), split by billable and
 *     non-billable tasks so every billable_filter reads it: task counts, the five summed figures, and
 *     how many children hold tasks of each kind, so a project list reads one row per listed task;
 *   - the row a project list shows for it under billable_filter=all, as JSON text, rendered with the
 *     roll-up (every write that changes a task, its assignees, figures or project currency refreshes
 *     its chain's roll-ups), so the common list reads stored text instead of rendering thousands of rows.
 * And each project's revision, bumped by every write to the project (see projects.repository's
 * findProject), so a cached project list can be checked for freshness with one indexed read.
 * Rows that existed before this migration are filled by refreshStaleLabor() (src/finance/labor.ts),
 * which migrateToLatest() runs after the migrations: it needs the calculator, which a migration must
 * not depend on.
 */
const KINDS = ['billable', 'non_billable'] as const;
const FIGURES = ['estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost'] as const;

const ROLLUP_COLUMNS = [
  'children',
  ...KINDS.flatMap((kind) => [`tree_${kind}_tasks`, `children_${kind}`, ...FIGURES.map((figure) => `tree_${kind}_${figure}`)]),
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('projects', (t) => {
    t.bigInteger('revision').notNullable().defaultTo(1);
  });
  await knex.schema.alterTable('task_labor', (t) => {
    t.text('members_json');
    t.text('grouped_members_json');
    t.text('assignees_json');
    t.integer('children');
    for (const kind of KINDS) {
      t.integer(`tree_${kind}_tasks`);
      t.integer(`children_${kind}`);
      // Unbounded numeric: sums of a whole subtree, exact.
      for (const figure of FIGURES) t.specificType(`tree_${kind}_${figure}`, 'numeric');
    }
    t.text('list_row_json');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('task_labor', (t) => {
    t.dropColumns('members_json', 'grouped_members_json', 'assignees_json', ...ROLLUP_COLUMNS, 'list_row_json');
  });
  await knex.schema.alterTable('projects', (t) => {
    t.dropColumn('revision');
  });
}
