import type { Knex } from 'knex';

/*
 * Time-aware costing (docs/finance-rules.md R15; docs/api.md "Dated rates, roles and cost lines"):
 *   - projects.time_zone: the IANA zone a time log's day and "today" are taken in (existing projects: UTC);
 *   - project_rate_cards becomes history: a null rate means "no rate from that day"; each entry records
 *     when and by whom (the token's name) it was written. Existing entries take effect from 1970-01-01,
 *     the beginning of time for this service, so every existing figure is unchanged;
 *   - project_member_roles: a member's role in a project as dated history. A member's first entry is
 *     stored at 1970-01-01 (it counts from the beginning); existing roles move there from
 *     project_members, which keeps membership only;
 *   - task_member_day_time: logged seconds per task, member and day (the log's date in the project's
 *     zone), kept in the transaction of every log insert or delete beside task_member_time, so a cost
 *     line is a sum over days, never over the logs themselves.
 * And marks without a hot row (src/finance/figures.ts): a write that changes only some tasks' own
 * figures (a time log, a fixed cost) no longer bumps its project's revision, so marks are told apart by
 * a sequence number (stale_tasks.seq) and a refresh removes exactly the marks it read; each refresh
 * bumps project_figures.generation, which the list cache keys on.
 * Existing projects' figures keep their stamps: the calculator version changes (cost lines are new in
 * the stored breakdowns), so start-up recomputes them with the same figures plus their cost lines.
 */
export const BEGINNING = '1970-01-01';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('delete from stale_tasks');
  await knex.raw('alter table stale_tasks drop constraint stale_tasks_pkey');
  await knex.raw('alter table stale_tasks add column seq bigint generated always as identity');
  await knex.raw('alter table stale_tasks add primary key (team_id, project_id, seq)');
  // A task's own breakdown is current unless that task carries a mark: looked up by task.
  await knex.raw('create index stale_tasks_task_idx on stale_tasks (team_id, project_id, task_id)');
  await knex.schema.alterTable('project_figures', (t) => {
    t.bigInteger('generation').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('projects', (t) => {
    t.text('time_zone').notNullable().defaultTo('UTC');
  });

  await knex.raw('alter table project_rate_cards alter column hourly_rate drop not null');
  await knex.schema.alterTable('project_rate_cards', (t) => {
    t.timestamp('written_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('written_by');
  });

  await knex.schema.createTable('project_member_roles', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('project_id').notNullable();
    t.uuid('team_member_id').notNullable();
    t.date('effective_from').notNullable();
    t.uuid('job_role_id');
    t.timestamp('written_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('written_by');
    t.primary(['team_id', 'project_id', 'team_member_id', 'effective_from']);
    t.foreign(['team_id', 'project_id', 'team_member_id'])
      .references(['team_id', 'project_id', 'team_member_id'])
      .inTable('project_members')
      .onDelete('CASCADE');
    t.foreign(['team_id', 'job_role_id']).references(['team_id', 'id']).inTable('job_roles');
  });
  await knex.raw(
    `insert into project_member_roles (team_id, project_id, team_member_id, effective_from, job_role_id)
     select team_id, project_id, team_member_id, date '${BEGINNING}', job_role_id from project_members`,
  );
  await knex.schema.alterTable('project_members', (t) => {
    t.dropColumn('job_role_id');
  });

  await knex.schema.createTable('task_member_day_time', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('project_id').notNullable();
    t.uuid('task_id').notNullable();
    t.uuid('team_member_id').notNullable();
    t.date('day').notNullable();
    t.bigInteger('total_seconds').notNullable().defaultTo(0);
    t.integer('log_count').notNullable().defaultTo(0);
    t.primary(['team_id', 'task_id', 'team_member_id', 'day']);
    t.foreign(['team_id', 'task_id']).references(['team_id', 'id']).inTable('tasks');
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects');
    t.index(['team_id', 'project_id'], 'task_member_day_time_project_idx');
  });
  await knex.raw(
    'alter table task_member_day_time add constraint task_member_day_time_ck check (total_seconds >= 0 and log_count >= 0)',
  );
  // Every existing project is in UTC.
  await knex.raw(
    `insert into task_member_day_time (team_id, project_id, task_id, team_member_id, day, total_seconds, log_count)
     select l.team_id, t.project_id, l.task_id, l.team_member_id, (l.logged_at at time zone 'UTC')::date, sum(l.seconds), count(*)
     from time_logs l join tasks t on t.team_id = l.team_id and t.id = l.task_id
     group by l.team_id, t.project_id, l.task_id, l.team_member_id, (l.logged_at at time zone 'UTC')::date`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('delete from stale_tasks');
  await knex.raw('drop index if exists stale_tasks_task_idx');
  await knex.raw('alter table stale_tasks drop constraint stale_tasks_pkey');
  await knex.raw('alter table stale_tasks drop column seq');
  await knex.raw('alter table stale_tasks add primary key (team_id, project_id, task_id, revision)');
  await knex.schema.alterTable('project_figures', (t) => {
    t.dropColumn('generation');
  });
  await knex.schema.dropTableIfExists('task_member_day_time');
  await knex.schema.alterTable('project_members', (t) => {
    t.uuid('job_role_id');
  });
  await knex.raw(
    `update project_members pm set job_role_id = (
       select r.job_role_id from project_member_roles r
       where r.team_id = pm.team_id and r.project_id = pm.project_id and r.team_member_id = pm.team_member_id
       order by r.effective_from desc limit 1)`,
  );
  await knex.schema.dropTableIfExists('project_member_roles');
  await knex.raw('delete from project_rate_cards where hourly_rate is null');
  await knex.schema.alterTable('project_rate_cards', (t) => {
    t.dropColumns('written_at', 'written_by');
  });
  await knex.raw('alter table project_rate_cards alter column hourly_rate set not null');
  await knex.schema.alterTable('projects', (t) => {
    t.dropColumn('time_zone');
  });
}
