import type { Knex } from 'knex';

/*
 * A new task is marked (stale_tasks) by the database itself, in the statement that inserts it: a
 * statement-level trigger on `tasks` marks every live task an insert adds, whoever inserts it (the
 * service's task creation; an instance of an earlier release still running while this one upgrades
 * the database; a row written by hand). So a refresh no longer searches the whole project for live
 * tasks without stored figures (finance/figures.ts; on the benchmark's 10,000-task project that search
 * took 35-100 ms of every refresh after a rate-card or member change), and no task can be missed by
 * it. The trigger touches only rows of the inserted task's team (the marks and the project's
 * revision), so it stays within one team's shard when the tables are distributed by team. Tasks an
 * earlier release created and no refresh has computed yet are marked here, once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `create function mark_new_tasks() returns trigger language plpgsql as $$
     begin
       insert into stale_tasks (team_id, project_id, task_id, revision)
       select n.team_id, n.project_id, n.id, p.revision
       from new_tasks n join projects p on p.team_id = n.team_id and p.id = n.project_id
       where n.archived_at is null;
       return null;
     end
     $$`,
  );
  await knex.raw(
    `create trigger tasks_mark_new after insert on tasks
     referencing new table as new_tasks for each statement execute function mark_new_tasks()`,
  );
  await knex.raw(
    `insert into stale_tasks (team_id, project_id, task_id, revision)
     select t.team_id, t.project_id, t.id, p.revision
     from tasks t join projects p on p.team_id = t.team_id and p.id = t.project_id
     where t.archived_at is null
       and not exists (select 1 from task_labor l where l.team_id = t.team_id and l.task_id = t.id)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger tasks_mark_new on tasks');
  await knex.raw('drop function mark_new_tasks()');
  // The marks are left: a refresh of the previous release reads and removes them as its own.
}
