import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { hashSecret } from '../src/auth/tokens.service';
import { refreshStaleProjects } from '../src/finance/read-model/freshness';

/*
 * Deterministic benchmark data, written with set-based SQL (generate_series) so two million time logs
 * take seconds, on PostgreSQL and PGlite alike. Every id is md5(<label>) read as a UUID, so the harness
 * knows every id without asking the database.
 *
 * Rates and roles are dated (docs/finance-rules.md R15): every role of every project gets a raise every four
 * months over the three years of logs, and every fifth project member changes role mid-2024, so cost
 * lines split as they would in a real project.
 */

export type Size = {
  name: 'full' | 'small';
  projects: number;
  tasks: number;
  members: number;
  logs: number;
  largeProjectTasks: number;
  mediumProjectTasks: number;
  bigTaskAssignees: number;
  bigTaskLogs: number;
};

export const SIZES: Record<Size['name'], Size> = {
  full: { name: 'full', projects: 200, tasks: 50_000, members: 500, logs: 2_000_000, largeProjectTasks: 10_000, mediumProjectTasks: 1_000, bigTaskAssignees: 100, bigTaskLogs: 100_000 },
  small: { name: 'small', projects: 20, tasks: 5_000, members: 150, logs: 100_000, largeProjectTasks: 2_000, mediumProjectTasks: 1_000, bigTaskAssignees: 100, bigTaskLogs: 10_000 },
};

export const BENCH_TEAM_ID = '00000000-0000-4000-8000-00000000b0b0';
/** An admin token of the bench team (benchmark data only). */
export const BENCH_TOKEN = 'pft_bench-admin-token-0123456789abcdef';
const MEMBERS_PER_PROJECT = 25;
const ROLES = 8;
const BIG_PROJECT_MEMBERS = 150;

/** The same md5-as-UUID the SQL computes with md5(label)::uuid. */
export function idOf(label: string): string {
  const hex = crypto.createHash('md5').update(label).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const projectId = (p: number) => idOf(`p${p}`);
export const taskId = (p: number, i: number) => idOf(`t${p}:${i}`);
export const BIG_TASK_ID = idOf('big');

/** Tasks per project: project 0 is the large one, 1 the medium one, the last holds the big task only. */
export function projectSizes(size: Size): number[] {
  const others = size.projects - 3;
  const rest = size.tasks - size.largeProjectTasks - size.mediumProjectTasks - 1;
  return Array.from({ length: size.projects }, (_, p) => {
    if (p === 0) return size.largeProjectTasks;
    if (p === 1) return size.mediumProjectTasks;
    if (p === size.projects - 1) return 0;
    return Math.floor(rest / others) + (p - 2 < rest % others ? 1 : 0);
  });
}

/** A uniformly random ordinary task (any project but the big task's). */
export function randomTaskId(size: Size): string {
  const sizes = projectSizes(size);
  for (;;) {
    const p = Math.floor(Math.random() * (size.projects - 1));
    const n = sizes[p] ?? 0;
    if (n > 0) return taskId(p, Math.floor(Math.random() * n));
  }
}

/** Bands of a project's task indexes: top level, then three levels of subtasks. */
function bands(n: number): [number, number][] {
  const cut = [0, Math.floor(n * 0.4), Math.floor(n * 0.7), Math.floor(n * 0.9), n];
  return [0, 1, 2, 3].map((k) => [cut[k] as number, cut[k + 1] as number]);
}

export async function datasetPresent(db: Knex, size: Size): Promise<boolean> {
  const team = await db('teams').where({ id: BENCH_TEAM_ID }).first('name');
  return team?.name === `bench ${size.name} v3`;
}

export async function generate(db: Knex, size: Size, log: (line: string) => void): Promise<void> {
  const team = BENCH_TEAM_ID;
  const sizes = projectSizes(size);
  const step = async (label: string, work: () => Promise<unknown>) => {
    const started = Date.now();
    await work();
    log(`  ${label} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
  await db('teams').insert({ id: team, name: `bench ${size.name} (incomplete)` }).onConflict('id').merge();
  await db('api_tokens').insert({ team_id: team, name: 'bench', role: 'admin', secret_hash: hashSecret(BENCH_TOKEN) }).onConflict('secret_hash').ignore();
  await step('roles and members', async () => {
    await db.raw(`insert into job_roles (team_id, id, name) select ?, md5('r' || r)::uuid, 'Role ' || r from generate_series(0, cast(? as integer)) r`, [team, ROLES - 1]);
    await db.raw(
      `insert into team_members (team_id, id, name, avatar_url)
       select ?, md5('m' || j)::uuid, 'Member ' || lpad(j::text, 4, '0'), case when j % 3 = 0 then null else 'https://img.example.com/' || j || '.png' end
       from generate_series(0, cast(? as integer)) j`,
      [team, size.members - 1],
    );
  });
  await step(`${size.projects} projects with members and rate cards`, async () => {
    await db.raw(
      `insert into projects (team_id, id, name, currency, budget)
       select ?, md5('p' || p)::uuid, 'Project ' || p, 'USD', 100000 + p * 1000 from generate_series(0, cast(? as integer)) p`,
      [team, size.projects - 1],
    );
    await db.raw(
      `insert into project_rate_cards (team_id, project_id, job_role_id, hourly_rate)
       select ?, md5('p' || p)::uuid, md5('r' || r)::uuid, 50 + (p * 13 + r * 7) % 100 + (r % 4) * 0.25
       from generate_series(0, cast(? as integer)) p, generate_series(0, cast(? as integer)) r`,
      [team, size.projects - 1, ROLES - 1],
    );
    // A raise every four months from May 2023 to September 2025.
    await db.raw(
      `insert into project_rate_cards (team_id, project_id, job_role_id, effective_from, hourly_rate)
       select ?, md5('p' || p)::uuid, md5('r' || r)::uuid, (date '2023-01-01' + n * interval '4 months')::date,
              50 + (p * 13 + r * 7) % 100 + (r % 4) * 0.25 + 5 * n
       from generate_series(0, cast(? as integer)) p, generate_series(0, cast(? as integer)) r, generate_series(1, 8) n`,
      [team, size.projects - 1, ROLES - 1],
    );
    await db.raw(
      `insert into project_members (team_id, project_id, team_member_id)
       select ?, md5('p' || p)::uuid, md5('m' || ((p * 7 + k) % ?))::uuid
       from generate_series(0, cast(? as integer)) p, generate_series(0, cast(? as integer)) k`,
      [team, size.members, size.projects - 2, MEMBERS_PER_PROJECT - 1],
    );
    // Each member's role from the beginning; every fifth one changes role on 1 July 2024.
    await db.raw(
      `insert into project_member_roles (team_id, project_id, team_member_id, effective_from, job_role_id)
       select cast(? as uuid), md5('p' || p)::uuid, md5('m' || ((p * 7 + k) % ?))::uuid, date '1970-01-01',
              case when k % 10 = 9 then null else md5('r' || (k % ?))::uuid end
       from generate_series(0, cast(? as integer)) p, generate_series(0, cast(? as integer)) k
       union all
       select cast(? as uuid), md5('p' || p)::uuid, md5('m' || ((p * 7 + k) % ?))::uuid, date '2024-07-01', md5('r' || ((k + 1) % ?))::uuid
       from generate_series(0, cast(? as integer)) p, generate_series(0, cast(? as integer)) k where k % 5 = 0`,
      [team, size.members, ROLES, size.projects - 2, MEMBERS_PER_PROJECT - 1, team, size.members, ROLES, size.projects - 2, MEMBERS_PER_PROJECT - 1],
    );
  });
  await step(`${size.tasks} tasks in trees up to three levels deep, with assignees`, async () => {
    await db.raw('drop table if exists bench_task_index');
    await db.raw('create unlogged table bench_task_index (n integer primary key, task_id uuid not null, p integer not null)');
    let offset = 0;
    for (const [p, n] of sizes.entries()) {
      if (n === 0) continue;
      for (const [k, [start, end]] of bands(n).entries()) {
        if (end <= start) continue;
        const [parentStart, parentEnd] = k === 0 ? [0, 1] : (bands(n)[k - 1] as [number, number]);
        await db.raw(
          `insert into tasks (team_id, id, project_id, parent_task_id, name, estimated_hours, billable, fixed_cost, status, priority, phase, created_at)
           select :team, md5('t' || :p || ':' || i)::uuid, md5('p' || :p)::uuid,
                  case when :k > 0 then md5('t' || :p || ':' || (:ps + (i * 7919) % :pl))::uuid end,
                  'Task ' || :p || '.' || i, ((i * 37) % 4000) / 100.0, i % 5 <> 0,
                  case when i % 10 = 0 then (i * 13) % 5000 + 0.5 else 0 end,
                  case when i % 5 = 4 then null else (array['todo', 'doing', 'review', 'done'])[1 + i % 4] end,
                  (array['low', 'medium', 'high'])[1 + i % 3],
                  case when i % 7 = 0 then null else 'Phase ' || (i % 6) end,
                  timestamptz '2024-01-01' + i * interval '1 minute'
           from generate_series(cast(:start as integer), cast(:end as integer)) i`,
          { team, p, k, ps: parentStart, pl: Math.max(parentEnd - parentStart, 1), start, end: end - 1 },
        );
      }
      await db.raw(
        `insert into bench_task_index (n, task_id, p) select :offset + i, md5('t' || :p || ':' || i)::uuid, :p from generate_series(0, cast(:last as integer)) i`,
        { offset, p, last: n - 1 },
      );
      await db.raw(
        `insert into task_assignees (team_id, task_id, team_member_id)
         select :team, md5('t' || :p || ':' || i)::uuid, md5('m' || ((:p * 7 + (i + 5 * k) % 25) % :members))::uuid
         from generate_series(0, cast(:last as integer)) i, generate_series(0, 2) k where k < i % 4`,
        { team, p, members: size.members, last: n - 1 },
      );
      offset += n;
    }
  });
  await step(`${size.logs} time logs`, async () => {
    const regular = sizes.reduce((a, b) => a + b, 0);
    const batch = 250_000;
    for (let from = 0; from < size.logs; from += batch) {
      await db.raw(
        `insert into time_logs (team_id, id, task_id, team_member_id, seconds, logged_at)
         select :team, md5('l' || j)::uuid, bt.task_id, md5('m' || ((bt.p * 7 + j % 25) % :members))::uuid,
                300 + (j * 97) % 7200, timestamptz '2023-01-01' + (j % 1095) * interval '1 day' + (j % 9) * interval '1 hour'
         from generate_series(cast(:from as integer), cast(:to as integer)) j join bench_task_index bt on bt.n = (j::bigint * 7919) % :regular`,
        { team, members: size.members, from, to: Math.min(from + batch, size.logs) - 1, regular },
      );
    }
    await db.raw('drop table bench_task_index');
  });
  await step(`the big task: ${size.bigTaskAssignees} assignees, ${size.bigTaskLogs} logs`, async () => {
    const p = size.projects - 1;
    await db.raw(
      `insert into project_members (team_id, project_id, team_member_id)
       select ?, md5('p' || ?)::uuid, md5('m' || k)::uuid from generate_series(0, cast(? as integer)) k`,
      [team, p, Math.min(BIG_PROJECT_MEMBERS, size.members) - 1],
    );
    await db.raw(
      `insert into project_member_roles (team_id, project_id, team_member_id, effective_from, job_role_id)
       select ?, md5('p' || ?)::uuid, md5('m' || k)::uuid, date '1970-01-01', md5('r' || (k % ?))::uuid from generate_series(0, cast(? as integer)) k`,
      [team, p, ROLES, Math.min(BIG_PROJECT_MEMBERS, size.members) - 1],
    );
    await db.raw(
      `insert into tasks (team_id, id, project_id, name, estimated_hours, fixed_cost) values (?, md5('big')::uuid, md5('p' || ?)::uuid, 'The big task', 4321.09, 2500)`,
      [team, p],
    );
    await db.raw(
      `insert into task_assignees (team_id, task_id, team_member_id) select ?, md5('big')::uuid, md5('m' || k)::uuid from generate_series(0, cast(? as integer)) k`,
      [team, size.bigTaskAssignees - 1],
    );
    await db.raw(
      `insert into time_logs (team_id, id, task_id, team_member_id, seconds, logged_at)
       select ?, md5('bl' || j)::uuid, md5('big')::uuid, md5('m' || (j % ?))::uuid, 60 + (j * 31) % 3600, timestamptz '2023-01-01' + (j % 1000) * interval '1 hour'
       from generate_series(0, cast(? as integer)) j`,
      [team, Math.min(BIG_PROJECT_MEMBERS, size.members), size.bigTaskLogs - 1],
    );
  });
  await step('running totals per task and member, and per day', async () => {
    await db.raw(
      `insert into task_member_time (team_id, project_id, task_id, team_member_id, total_seconds, log_count)
       select l.team_id, t.project_id, l.task_id, l.team_member_id, sum(l.seconds), count(*)
       from time_logs l join tasks t on t.team_id = l.team_id and t.id = l.task_id
       where l.team_id = ? group by 1, 2, 3, 4`,
      [team],
    );
    // Every bench project is in UTC.
    await db.raw(
      `insert into task_member_day_time (team_id, project_id, task_id, team_member_id, day, total_seconds, log_count)
       select l.team_id, t.project_id, l.task_id, l.team_member_id, (l.logged_at at time zone 'UTC')::date, sum(l.seconds), count(*)
       from time_logs l join tasks t on t.team_id = l.team_id and t.id = l.task_id
       where l.team_id = ? group by 1, 2, 3, 4, 5`,
      [team],
    );
    await db.raw('analyze');
  });
  await step('labor figures of every task, by the calculator, stamped', async () => {
    // Every project without a stamp: computed and stamped, as a start-up after a migration would.
    await refreshStaleProjects(db);
    // The labor step inserts then updates every row: vacuum the dead versions and gather statistics,
    // as autovacuum would a little later, so every run starts from the same state.
    await db.raw('vacuum analyze task_labor');
  });
  await db('teams').where({ id: team }).update({ name: `bench ${size.name} v3` });
}
