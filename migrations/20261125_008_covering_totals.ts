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
 * a HOT update (the index holds the value), which the time-log benchmark measures; every index of the
 * table then gains an entry per update anyway, so the per-day totals' index by project and day carries
 * the task, member and seconds as well: the search for the tasks and members with time from a day on
 * (a rate change's, finance.repository's CHANGED_PAIRS) reads it alone too. The keys are
 * rebuilt under an exclusive lock: time logs and finance reads wait while a large database migrates.
 */
const TABLES = [
  { table: 'task_member_time', key: 'team_id, task_id, team_member_id' },
  { table: 'task_member_day_time', key: 'team_id, task_id, team_member_id, day' },
] as const;

/** The per-day totals by project and day (tasks with time logged from a day on), with or without what they are read for. */
const projectDayIndex = (include: string) =>
  `create index task_member_day_time_project_day_idx on task_member_day_time (team_id, project_id, day)${include}`;

export async function up(knex: Knex): Promise<void> {
  for (const { table, key } of TABLES) {
    await knex.raw(`alter table ${table} drop constraint ${table}_pkey, add constraint ${table}_pkey primary key (${key}) include (total_seconds)`);
  }
  await knex.raw('drop index task_member_day_time_project_day_idx');
  await knex.raw(projectDayIndex(' include (task_id, team_member_id, total_seconds)'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index task_member_day_time_project_day_idx');
  await knex.raw(projectDayIndex(''));
  for (const { table, key } of TABLES) {
    await knex.raw(`alter table ${table} drop constraint ${table}_pkey, add constraint ${table}_pkey primary key (${key})`);
  }
}
