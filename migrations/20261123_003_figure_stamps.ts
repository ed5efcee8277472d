import type { Knex } from 'knex';

/*
 * Stamps on the stored figures (see src/finance/figures.ts, "How the figures stay current" in the README):
 *   - projects.reset_revision: the revision of the last write that changed inputs of every task of the
 *     project (its rate card, its currency); a stamp older than it means every task is recomputed;
 *   - project_figures: the stamp a project's stored figures (task_labor) were last brought current
 *     under: the project's revision, the day the rates were read for, and the calculator's version;
 *   - stale_tasks: tasks a write changed (and the old parent of a moved or archived one), one row per
 *     write and task, with the revision of that write; a refresh recomputes them and their ancestors' roll-ups.
 * And an index of the running totals by member, to find the tasks a member logged time on (a rename
 * marks them). Existing projects have no stamp, so their first read recomputes them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('projects', (t) => {
    t.bigInteger('reset_revision').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('project_figures', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('project_id').notNullable();
    t.bigInteger('revision').notNullable();
    t.date('day').notNullable();
    t.integer('calculator_version').notNullable();
    t.primary(['team_id', 'project_id']);
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects').onDelete('CASCADE');
  });
  await knex.schema.createTable('stale_tasks', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('project_id').notNullable();
    t.uuid('task_id').notNullable();
    t.bigInteger('revision').notNullable();
    // One row per write and task: a write only ever inserts, so it never waits on a refresh deleting
    // older marks of the same task (nor the other way round).
    t.primary(['team_id', 'project_id', 'task_id', 'revision']);
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects').onDelete('CASCADE');
  });
  await knex.schema.alterTable('task_member_time', (t) => {
    t.index(['team_id', 'team_member_id'], 'task_member_time_member_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('task_member_time', (t) => {
    t.dropIndex(['team_id', 'team_member_id'], 'task_member_time_member_idx');
  });
  await knex.schema.dropTableIfExists('stale_tasks');
  await knex.schema.dropTableIfExists('project_figures');
  await knex.schema.alterTable('projects', (t) => {
    t.dropColumn('reset_revision');
  });
}
