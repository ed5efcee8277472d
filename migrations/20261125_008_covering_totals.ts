import type { Knex } from 'knex';

/*
 * The running totals' primary keys carry the seconds (INCLUDE), so the statements that read a task's
 * participants and cost lines (finance.repository's participantsInScope: every refresh, preview,
 * ranged list and export of cost lines) find them in the index alone instead of visiting a table page
 * per row. A project's rows are spread over the whole table (time logs of all projects arrive
 * interleaved): on the benchmark's 10,000-task project that was a table page per row for 400,000 rows
 * (one 150-task statement of a preview: 177 ms, 75-81 ms after; BENCHMARKS.md, eighth run).
 * Index-only reads need the pages marked all-visible, which (auto)vacuum does (the embedded database
 * runs none: there nothing changes but the index's size). The cost: an update of a total is no longer
 * a HOT update (the index holds the value), which the time-log benchmark measures. The keys are
 * rebuilt under an exclusive lock: time logs and finance reads wait while a large database migrates.
 */
const TABLES = [
  { table: 'task_member_time', key: 'team_id, task_id, team_member_id' },
  { table: 'task_member_day_time', key: 'team_id, task_id, team_member_id, day' },
] as const;

export async function up(knex: Knex): Promise<void> {
  for (const { table, key } of TABLES) {
    await knex.raw(`alter table ${table} drop constraint ${table}_pkey, add constraint ${table}_pkey primary key (${key}) include (total_seconds)`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const { table, key } of TABLES) {
    await knex.raw(`alter table ${table} drop constraint ${table}_pkey, add constraint ${table}_pkey primary key (${key})`);
  }
}
