import type { Knex } from 'knex';

/*
 * A change to a member that shows in figures (its name, its avatar, its role in a project) now marks
 * out of date every project the member takes part in, not each task (src/projects/projects.repository's
 * lockTeamProjects): the running totals' index by member carries the project, so the projects a member
 * logged time in are read from the index alone (a member of the benchmark's dataset has time on some
 * 11,000 tasks, whose rows took 60 ms to visit).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index task_member_time_member_project_idx on task_member_time (team_id, team_member_id, project_id)');
  await knex.raw('drop index if exists task_member_time_member_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index task_member_time_member_idx on task_member_time (team_id, team_member_id)');
  await knex.raw('drop index if exists task_member_time_member_project_idx');
}
