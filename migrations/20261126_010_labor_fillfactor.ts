import type { Knex } from 'knex';

/*
 * Room on each page of task_labor for the next version of its rows. Every refresh rewrites stored
 * figures (a raise from today re-costs thousands of tasks of a large project; the parts filler stores
 * breakdown parts behind it), and a row's new version that fits on its page is a HOT update: no entry
 * in either index of the table, and the page's dead versions are pruned without a VACUUM when a later
 * statement finds the page nearly full (once no open snapshot needs them). Packed full (the default
 * fillfactor of 100), about half of the updates went to other pages with index entries, and the dead
 * versions stayed until a VACUUM: on the benchmark's
 * 10,000-task project, a list after a rate-card change took 0.38-0.53 s, slower with every change
 * (56,000 dead rows after 14 changes with autovacuum off); at 50, 0.35-0.43 s, 96% of the updates HOT,
 * and the dead rows stayed under 4,500 (BENCHMARKS.md, eleventh run).
 *
 * The setting applies to pages written from now on: an existing table's full pages gain the room as
 * their rows move on update (or at once with `VACUUM FULL task_labor`, which locks the table).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table task_labor set (fillfactor = 50)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table task_labor reset (fillfactor)');
}
