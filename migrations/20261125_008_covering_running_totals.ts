import type { Knex } from 'knex';

/*
 * The running totals' primary keys carry the seconds (INCLUDE total_seconds), so a recomputation reads
 * a task's totals from the index alone (an index-only scan) instead of visiting a heap page per row:
 * a task's per-day rows were written over years, one time log at a time, so they lie on as many pages
 * as they are rows. On the benchmark's 10,000-task project, reading its 400,000 per-day rows by task
 * took 1.4 s of heap visits and 0.15 s from the index (BENCHMARKS.md, "Running totals read from their
 * index"). What it costs: an update of the seconds is no longer a HOT update (the index holds them),
 * so each time log writes an index entry per index of the two tables.
 */
const TABLES = [
  ['task_member_day_time', 'team_id, task_id, team_member_id, day'],
  ['task_member_time', 'team_id, task_id, team_member_id'],
] as const;

async function primaryKey(knex: Knex, table: string, columns: string, include: string): Promise<void> {
  await knex.raw(`alter table ${table} drop constraint ${table}_pkey, add constraint ${table}_pkey primary key (${columns})${include}`);
}

export async function up(knex: Knex): Promise<void> {
  for (const [table, columns] of TABLES) await primaryKey(knex, table, columns, ' include (total_seconds)');
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, columns] of TABLES) await primaryKey(knex, table, columns, '');
}
