import type { Knex } from 'knex';

/*
 * From this release a task's creation marks the new task (stale_tasks), as every other write to a
 * project marks what it changes, and a refresh no longer searches the whole project for live tasks
 * without stored figures (finance/figures.ts; on the benchmark's 10,000-task project that search took
 * 55-100 ms of every refresh after a rate-card or member change). Tasks a previous release created
 * and no refresh has computed yet carry no such mark: they are marked here, once, at the project's
 * current revision.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `insert into stale_tasks (team_id, project_id, task_id, revision)
     select t.team_id, t.project_id, t.id, p.revision
     from tasks t join projects p on p.team_id = t.team_id and p.id = t.project_id
     where t.archived_at is null
       and not exists (select 1 from task_labor l where l.team_id = t.team_id and l.task_id = t.id)`,
  );
}

export async function down(): Promise<void> {
  // The marks are left: a refresh of the previous release reads and removes them as its own.
}
