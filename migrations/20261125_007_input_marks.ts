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
 * Stored breakdown parts (each member's name, avatar, role and rate today) carry the version of the
 * project's parts they were computed under (task_labor.parts_version): such a change bumps the
 * project's (project_figures.parts_version) once, where rewriting every part it shows in took 250 ms.
 * And the per-day running totals' index by project gains the day, so the tasks with time logged from
 * a day on (what a change from that day costs) are a range of it: none for a change from today, where
 * the project's 400,000 rows of the benchmark's largest project were read to find that out.
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
  await knex.schema.alterTable('project_figures', (t) => {
    t.bigInteger('parts_version').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('task_labor', (t) => {
    t.bigInteger('parts_version').notNullable().defaultTo(0);
  });
  await knex.raw('create index task_member_day_time_project_day_idx on task_member_day_time (team_id, project_id, day)');
  await knex.raw('drop index if exists task_member_day_time_project_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index task_member_day_time_project_idx on task_member_day_time (team_id, project_id)');
  await knex.raw('drop index if exists task_member_day_time_project_day_idx');
  await knex.schema.alterTable('task_labor', (t) => {
    t.dropColumn('parts_version');
  });
  await knex.schema.alterTable('project_figures', (t) => {
    t.dropColumn('parts_version');
  });
  await knex.schema.dropTableIfExists('stale_inputs');
}
