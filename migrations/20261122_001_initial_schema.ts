import type { Knex } from 'knex';

/*
 * Every table carries team_id and leads its primary key with it, and every foreign key includes it,
 * so the schema can be distributed by team (Citus) and no row can ever point at another team's row.
 * Money is numeric (exact); hours are numeric with 2 decimals; time is kept in whole seconds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('teams', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  // Bearer tokens: only the SHA-256 of the secret is stored, and a token is found by that hash. Being
  // looked up before the team is known, this small table would be a Citus reference table.
  await knex.schema.createTable('api_tokens', (t) => {
    t.uuid('team_id').notNullable().references('id').inTable('teams');
    t.uuid('id').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('role').notNullable();
    t.binary('secret_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.primary(['team_id', 'id']);
    t.unique(['secret_hash'], { indexName: 'api_tokens_secret_hash_uq' });
  });
  await knex.raw("alter table api_tokens add constraint api_tokens_role_ck check (role in ('viewer', 'editor', 'admin'))");

  await knex.schema.createTable('job_roles', (t) => {
    t.uuid('team_id').notNullable().references('id').inTable('teams');
    t.uuid('id').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'id']);
  });
  await knex.raw('create unique index job_roles_team_name_uq on job_roles (team_id, lower(name))');

  await knex.schema.createTable('team_members', (t) => {
    t.uuid('team_id').notNullable().references('id').inTable('teams');
    t.uuid('id').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.text('email');
    t.text('avatar_url');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'id']);
  });
  await knex.raw(
    'create unique index team_members_team_email_uq on team_members (team_id, lower(email)) where email is not null',
  );

  await knex.schema.createTable('projects', (t) => {
    t.uuid('team_id').notNullable().references('id').inTable('teams');
    t.uuid('id').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable();
    t.specificType('currency', 'char(3)').notNullable().defaultTo('USD');
    t.decimal('budget', 20, 4);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'id']);
  });
  await knex.raw('create unique index projects_team_name_uq on projects (team_id, lower(name))');
  await knex.raw('alter table projects add constraint projects_budget_ck check (budget is null or budget >= 0)');

  await knex.schema.createTable('project_rate_cards', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('project_id').notNullable();
    t.uuid('job_role_id').notNullable();
    t.date('effective_from').notNullable().defaultTo('1970-01-01');
    t.decimal('hourly_rate', 20, 4).notNullable();
    t.primary(['team_id', 'project_id', 'job_role_id', 'effective_from']);
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects').onDelete('CASCADE');
    t.foreign(['team_id', 'job_role_id']).references(['team_id', 'id']).inTable('job_roles');
  });
  await knex.raw('alter table project_rate_cards add constraint rate_nonnegative_ck check (hourly_rate >= 0)');

  await knex.schema.createTable('project_members', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('project_id').notNullable();
    t.uuid('team_member_id').notNullable();
    t.uuid('job_role_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'project_id', 'team_member_id']);
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects').onDelete('CASCADE');
    t.foreign(['team_id', 'team_member_id']).references(['team_id', 'id']).inTable('team_members');
    t.foreign(['team_id', 'job_role_id']).references(['team_id', 'id']).inTable('job_roles');
  });

  await knex.schema.createTable('tasks', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('id').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('project_id').notNullable();
    t.uuid('parent_task_id');
    t.text('name').notNullable();
    t.decimal('estimated_hours', 14, 2).notNullable().defaultTo(0);
    t.boolean('billable').notNullable().defaultTo(true);
    t.decimal('fixed_cost', 20, 4).notNullable().defaultTo(0);
    t.text('status');
    t.text('priority');
    t.text('phase');
    t.timestamp('archived_at', { useTz: true });
    // Bumped on every fixed-cost change; exposed as the ETag for optimistic concurrency.
    t.integer('finance_version').notNullable().defaultTo(1);
    // clock_timestamp, not now(): tasks created in one transaction still list in creation order.
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.raw('clock_timestamp()'));
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'id']);
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects');
    t.foreign(['team_id', 'parent_task_id']).references(['team_id', 'id']).inTable('tasks');
    t.index(['team_id', 'project_id', 'parent_task_id'], 'tasks_project_parent_idx');
    t.index(['team_id', 'parent_task_id'], 'tasks_parent_idx');
  });
  await knex.raw(
    'alter table tasks add constraint tasks_figures_ck check (estimated_hours >= 0 and fixed_cost >= 0)',
  );

  await knex.schema.createTable('task_assignees', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('task_id').notNullable();
    t.uuid('team_member_id').notNullable();
    t.primary(['team_id', 'task_id', 'team_member_id']);
    t.foreign(['team_id', 'task_id']).references(['team_id', 'id']).inTable('tasks').onDelete('CASCADE');
    t.foreign(['team_id', 'team_member_id']).references(['team_id', 'id']).inTable('team_members');
    t.index(['team_id', 'team_member_id'], 'task_assignees_member_idx');
  });

  await knex.schema.createTable('time_logs', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('id').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('task_id').notNullable();
    t.uuid('team_member_id').notNullable();
    t.integer('seconds').notNullable();
    t.timestamp('logged_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('note');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'id']);
    t.foreign(['team_id', 'task_id']).references(['team_id', 'id']).inTable('tasks');
    t.foreign(['team_id', 'team_member_id']).references(['team_id', 'id']).inTable('team_members');
    t.index(['team_id', 'task_id', 'logged_at'], 'time_logs_task_idx');
  });
  await knex.raw('alter table time_logs add constraint time_logs_seconds_ck check (seconds > 0)');

  // Running totals per task and member, kept in the same transaction as every log insert or delete,
  // so a breakdown reads one row per member however many logs there are.
  await knex.schema.createTable('task_member_time', (t) => {
    t.uuid('team_id').notNullable();
    // The task's project (tasks never move): a project list reads only its own project's totals.
    t.uuid('project_id').notNullable();
    t.uuid('task_id').notNullable();
    t.uuid('team_member_id').notNullable();
    t.bigInteger('total_seconds').notNullable().defaultTo(0);
    t.integer('log_count').notNullable().defaultTo(0);
    t.primary(['team_id', 'task_id', 'team_member_id']);
    t.foreign(['team_id', 'task_id']).references(['team_id', 'id']).inTable('tasks');
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects');
    t.foreign(['team_id', 'team_member_id']).references(['team_id', 'id']).inTable('team_members');
    t.index(['team_id', 'project_id'], 'task_member_time_project_idx');
  });
  await knex.raw(
    'alter table task_member_time add constraint task_member_time_ck check (total_seconds >= 0 and log_count >= 0)',
  );

  // Each task's own labor figures as the calculator computed them, refreshed in the same transaction
  // as every write that can change them, so a project list reads one row per task.
  await knex.schema.createTable('task_labor', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('task_id').notNullable();
    t.uuid('project_id').notNullable();
    t.decimal('estimated_labor_cost', 24, 4).notNullable();
    t.decimal('logged_hours', 16, 2).notNullable();
    t.decimal('actual_labor_cost', 24, 4).notNullable();
    t.primary(['team_id', 'task_id']);
    t.foreign(['team_id', 'task_id']).references(['team_id', 'id']).inTable('tasks');
    t.foreign(['team_id', 'project_id']).references(['team_id', 'id']).inTable('projects');
    t.index(['team_id', 'project_id'], 'task_labor_project_idx');
  });

  await knex.schema.createTable('fixed_cost_history', (t) => {
    t.uuid('team_id').notNullable();
    t.uuid('id').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('task_id').notNullable();
    t.decimal('old_value', 20, 4).notNullable();
    t.decimal('new_value', 20, 4).notNullable();
    t.integer('finance_version').notNullable();
    t.uuid('changed_by_token_id');
    t.text('changed_by').notNullable();
    t.timestamp('changed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['team_id', 'id']);
    t.foreign(['team_id', 'task_id']).references(['team_id', 'id']).inTable('tasks');
    t.index(['team_id', 'task_id', 'finance_version'], 'fixed_cost_history_task_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'fixed_cost_history',
    'task_labor',
    'task_member_time',
    'time_logs',
    'task_assignees',
    'tasks',
    'project_members',
    'project_rate_cards',
    'projects',
    'team_members',
    'job_roles',
    'api_tokens',
    'teams',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
