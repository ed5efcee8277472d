import type { Knex } from 'knex';

/*
 * Indexes in the order of each paged list (src/http/paging.ts), led by team_id like every key: a page
 * is then a range scan that starts at its cursor and stops after `limit` rows, however deep the page.
 * The time-log and fixed-cost-history indexes replace the ones before them (the same leading columns,
 * now ending in the list's tie-breaker), so a time log, the hottest write, updates no more indexes.
 * A rate card's history is ordered by the role's name (another table): its index gives the day order
 * within a project, the names sorted within a day.
 */
const INDEXES = [
  'create index projects_list_order_idx on projects (team_id, name, id)',
  'create index team_members_list_order_idx on team_members (team_id, name, id)',
  'create index job_roles_list_order_idx on job_roles (team_id, name, id)',
  'create index api_tokens_list_order_idx on api_tokens (team_id, created_at, id)',
  'create index time_logs_task_order_idx on time_logs (team_id, task_id, logged_at desc, id)',
  'create index fixed_cost_history_order_idx on fixed_cost_history (team_id, task_id, finance_version, changed_at, id)',
  'create index project_rate_cards_history_idx on project_rate_cards (team_id, project_id, effective_from)',
];

export async function up(knex: Knex): Promise<void> {
  for (const statement of INDEXES) await knex.raw(statement);
  await knex.raw('drop index time_logs_task_idx');
  await knex.raw('drop index fixed_cost_history_task_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index fixed_cost_history_task_idx on fixed_cost_history (team_id, task_id, finance_version)');
  await knex.raw('create index time_logs_task_idx on time_logs (team_id, task_id, logged_at)');
  for (const statement of INDEXES) await knex.raw(`drop index ${statement.split(' ')[2]}`);
}
