import type { Knex } from 'knex';

/*
 * Budgets that warn (docs/finance-rules.md R28, docs/api.md "Budgets"):
 *   - projects.hours_budget (hours, 2 decimals, >= 0, or null), budget_period ('total' or 'month', in
 *     the project's time zone) and budget_alerts (distinct percentages 1..1000, default 80 and 100);
 *   - budget_watches: one row per budgeted project, the lock every write to a budgeted project takes
 *     (after the project's row) before it evaluates the thresholds, so evaluations run one at a time;
 *     with what the last evaluation found spent in its period, on which day (basis_key: the period
 *     and the day), the basis a time log or fixed cost of that day adds its task's change to, instead
 *     of computing the whole project again;
 *   - budget_crossings: the thresholds crossed, per project, kind ('money' or 'hours'), percentage and
 *     period ('total' or the month, 'YYYY-MM'): a row is a crossing recorded once; deleting it re-arms
 *     the threshold. A month's rows stay as that month's history.
 * Existing projects keep their money budget and get the default alerts; nothing is crossed yet: the
 * first write to a budgeted project (or the first read of its budget) records what spent already reaches.
 */
export async function up(knex: Knex): Promise<void> {
  const statements = [
    `alter table projects add column hours_budget numeric(14, 2)`,
    `alter table projects add constraint projects_hours_budget_ck check (hours_budget is null or hours_budget >= 0)`,
    `alter table projects add column budget_period text not null default 'total'`,
    `alter table projects add constraint projects_budget_period_ck check (budget_period in ('total', 'month'))`,
    `alter table projects add column budget_alerts integer[] not null default '{80,100}'`,
    `create table budget_watches (
       team_id uuid not null,
       project_id uuid not null,
       basis_key text,
       spent_money numeric,
       spent_hours numeric,
       primary key (team_id, project_id),
       foreign key (team_id, project_id) references projects (team_id, id) on delete cascade
    )`,
    `create table budget_crossings (
       team_id uuid not null,
       project_id uuid not null,
       kind text not null check (kind in ('money', 'hours')),
       percent integer not null,
       period_key text not null,
       crossed_at timestamptz not null,
       primary key (team_id, project_id, period_key, kind, percent),
       foreign key (team_id, project_id) references projects (team_id, id) on delete cascade
    )`,
  ];
  for (const statement of statements) await knex.raw(statement);
}

export async function down(knex: Knex): Promise<void> {
  const statements = [
    'drop table budget_crossings',
    'drop table budget_watches',
    'alter table projects drop column budget_alerts',
    'alter table projects drop column budget_period',
    'alter table projects drop column hours_budget',
  ];
  for (const statement of statements) await knex.raw(statement);
}
