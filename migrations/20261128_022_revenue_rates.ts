import type { Knex } from 'knex';

/*
 * Revenue, cost and margin (docs/finance-rules.md, docs/api.md "A member's own rates"):
 *   - project_rate_cards.bill_rate: what an hour (or a day) of the role is billed, dated with the entry;
 *     null means 0, exactly like a null hourly_rate;
 *   - project_member_rates: a member's own rates in a project, dated history like the rate card (an
 *     entry's null rate defers to the role's rate on that day, each rate resolved on its own);
 *   - projects.rate_unit ('hour' or 'day') and hours_per_day (> 0, <= 24, 2 decimals): in a 'day'
 *     project every rate entered is per day. Both may change only while the project has no rate entry.
 * Existing projects bill nothing, are priced per hour with 8-hour days: every existing figure is unchanged.
 */
export async function up(knex: Knex): Promise<void> {
  const statements = [
    `alter table project_rate_cards add column bill_rate numeric(20, 4)`,
    `alter table project_rate_cards add constraint bill_rate_nonnegative_ck check (bill_rate is null or bill_rate >= 0)`,
    `alter table projects add column rate_unit text not null default 'hour'`,
    `alter table projects add constraint projects_rate_unit_ck check (rate_unit in ('hour', 'day'))`,
    `alter table projects add column hours_per_day numeric(4, 2) not null default 8`,
    `alter table projects add constraint projects_hours_per_day_ck check (hours_per_day > 0 and hours_per_day <= 24)`,
    `create table project_member_rates (
       team_id uuid not null,
       project_id uuid not null,
       team_member_id uuid not null,
       effective_from date not null,
       hourly_rate numeric(20, 4),
       bill_rate numeric(20, 4),
       written_at timestamptz not null default now(),
       written_by text,
       primary key (team_id, project_id, team_member_id, effective_from),
       foreign key (team_id, project_id, team_member_id)
         references project_members (team_id, project_id, team_member_id) on delete cascade,
       constraint member_rates_nonnegative_ck check ((hourly_rate is null or hourly_rate >= 0) and (bill_rate is null or bill_rate >= 0))
    )`,
  ];
  for (const statement of statements) await knex.raw(statement);
}

export async function down(knex: Knex): Promise<void> {
  const statements = [
    `drop table if exists project_member_rates`,
    `alter table projects drop constraint if exists projects_hours_per_day_ck`,
    `alter table projects drop column if exists hours_per_day`,
    `alter table projects drop constraint if exists projects_rate_unit_ck`,
    `alter table projects drop column if exists rate_unit`,
    `alter table project_rate_cards drop constraint if exists bill_rate_nonnegative_ck`,
    `alter table project_rate_cards drop column if exists bill_rate`,
  ];
  for (const statement of statements) await knex.raw(statement);
}
