import type { Knex } from 'knex';

/*
 * Budgets settled right after a write commits instead of inside it (docs/finance-rules.md R28.5):
 *   - budget_pending: what a write to a budgeted project changed, inserted in the write's own
 *     transaction (a row per write; task_ids null: the whole project may have changed). Inserting
 *     never waits for another write, so writes to one project no longer queue on its budget. The
 *     settle that follows the commit (or, after a crash, the background drain) deletes the rows it
 *     evaluates under the project's budget lock, so each is evaluated once;
 *   - budget_shares: each task's share of spent in the period and day of budget_watches.basis_key,
 *     as last settled; spent (budget_watches) is their sum, so a settle of a few tasks recomputes only
 *     theirs and adds the differences, whatever writes committed meanwhile.
 *   - budget_watches.settled: a generation bumped by every settle, so a settle planned from a snapshot
 *     writes only if no other settle came between (budget_watches is no longer locked: the budget
 *     lock is an advisory lock on the project);
 *   - what lets a time log leave its settle for later when it cannot reach a threshold: the highest
 *     cost rate an hour of the project may have (budget_watches.max_rate), how far spent is from the
 *     lowest threshold not reached (headroom_money, headroom_hours; null: none left), and each time
 *     log's pending row's upper bound of what it adds (upper_money, upper_hours; null: unknown).
 */
export async function up(knex: Knex): Promise<void> {
  const statements = [
    `create table budget_pending (
       team_id uuid not null,
       project_id uuid not null,
       id bigint generated always as identity,
       task_ids uuid[],
       upper_money numeric,
       upper_hours numeric,
       marked_at timestamptz not null,
       primary key (team_id, project_id, id),
       foreign key (team_id, project_id) references projects (team_id, id) on delete cascade
    )`,
    // The marks a time log's statement must find to know it cannot wait (time-logs.repository.ts's BUDGET_SKIP).
    `create index budget_pending_unbounded on budget_pending (team_id, project_id) where upper_money is null`,
    `create table budget_shares (
       team_id uuid not null,
       project_id uuid not null,
       task_id uuid not null,
       money numeric not null,
       hours numeric not null,
       primary key (team_id, project_id, task_id),
       foreign key (team_id, project_id) references projects (team_id, id) on delete cascade
    )`,
    `alter table budget_watches add column settled bigint not null default 0`,
    `alter table budget_watches add column max_rate numeric`,
    `alter table budget_watches add column headroom_money numeric`,
    `alter table budget_watches add column headroom_hours numeric`,
    // Watches settled before this migration hold no shares: their next settle computes the whole project.
    `update budget_watches set basis_key = null, spent_money = null, spent_hours = null`,
  ];
  for (const statement of statements) await knex.raw(statement);
}

export async function down(knex: Knex): Promise<void> {
  for (const statement of ['alter table budget_watches drop column settled, drop column max_rate, drop column headroom_money, drop column headroom_hours', 'drop table budget_shares', 'drop table budget_pending']) await knex.raw(statement);
}
