import type { Knex } from 'knex';

/*
 * Marks of changed inputs that are not tasks (src/finance/figures.ts): a member's role or display
 * (name, avatar) in a project, or some roles' rates, each from a day on. The write that changes them
 * records one row per project and member, or per role, in O(1); the refresh that reads the mark works
 * out which tasks it changes (only then, so nothing committed since the write is missed) and
 * recomputes those alone, where a whole-project recomputation used to follow every such write (5 s on
 * the benchmark's 10,000-task project for a one-role rate change touching a fifth of its tasks).
 *   - team_member_id set: that member's role in the project from from_day on ('infinity': its role is
 *     unchanged, only how it shows: its name orders the estimate split);
 *   - job_role_id set: that role's rate from from_day on.
 * Like stale_tasks, one row per write, told apart by a sequence number that a refresh removes exactly.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('stale_inputs', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('project_id').notNullable();
    t.uuid('team_member_id');
    t.uuid('job_role_id');
    t.date('from_day').notNullable();
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects').onDelete('CASCADE');
  });
  await knex.raw('alter table stale_inputs add column seq bigint generated always as identity');
  await knex.raw('alter table stale_inputs add primary key (team_id, project_id, seq)');
  await knex.raw('alter table stale_inputs add constraint stale_inputs_one_input_ck check ((team_member_id is null) <> (job_role_id is null))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('stale_inputs');
}
