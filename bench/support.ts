import { ChildProcess, execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import type { Knex } from 'knex';
import { createDb, DatabaseTarget } from '../src/db/knex';
import { migrateToLatest } from '../src/db/migrate';
import { nowIso } from '../src/clock';
import { bringCurrent } from '../src/finance/read-model/freshness';
import { fillBreakdownParts } from '../src/finance/read-model/parts-fill';
import { projectsWithoutParts } from '../src/finance/read-model/breakdown.sql';
import { BIG_TASK_ID, Size, datasetPresent, generate } from './dataset';

/* What the benchmark and the soak run share: the dataset's database, the service process, its RSS. */

export const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `--name value` from a script's arguments, or the fallback. */
export function commandOption(args: readonly string[], name: string, fallback: string): string {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] ? (args[at + 1] as string) : fallback;
}

export function log(line: string) {
  process.stdout.write(`${line}\n`);
}

/**
 * The breakdown parts the service's filler (src/finance/read-model/parts-fill.ts) computes behind project-wide
 * refreshes, filled in before a run: a run measures a service that has had the time to, not one
 * spending its first minutes on it in the background.
 */
export async function fillAllParts(db: Knex): Promise<void> {
  const started = Date.now();
  let stored = 0;
  for (const project of await projectsWithoutParts(db)) stored += (await fillBreakdownParts(db, project.team_id, project.project_id)).stored;
  log(`breakdown parts filled in for ${stored} tasks (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/**
 * Every project's figures brought current and the breakdown parts filled in: what reads and the
 * service's background filler would do in time. A run measures stored figures, and a share of
 * `/healthz` measured while the filler works in the service's quiet moments (every `/healthz` slice:
 * probes do not count as API activity) compares a busy service with an idle one.
 */
export async function settle(db: Knex): Promise<void> {
  const started = Date.now();
  const projects: { team_id: string; id: string }[] = await db('projects').select('team_id', 'id').orderBy(['team_id', 'id']);
  const now = nowIso();
  for (const project of projects) await bringCurrent(db, project.team_id, project.id, now);
  log(`every project's figures current (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  await fillAllParts(db);
}

/**
 * The rows present in the benchmark's database, counted at the start of a run: what was measured,
 * which is more than the configured sizes once soak and isolation runs have posted time logs (and
 * tasks, members) into the reused database.
 */
export type RowsPresent = { projects: number; tasks: number; liveTasks: number; members: number; timeLogs: number; bigTaskAssignees: number; bigTaskLogs: number };

export async function rowsPresent(db: Knex): Promise<RowsPresent> {
  const count = async (query: Knex.QueryBuilder) => Number((await query.count({ n: '*' }))[0]?.n ?? 0);
  return {
    projects: await count(db('projects')),
    tasks: await count(db('tasks')),
    liveTasks: await count(db('tasks').whereNull('archived_at')),
    members: await count(db('team_members')),
    timeLogs: await count(db('time_logs')),
    bigTaskAssignees: await count(db('task_assignees').where({ task_id: BIG_TASK_ID })),
    bigTaskLogs: await count(db('time_logs').where({ task_id: BIG_TASK_ID })),
  };
}

/** The dataset line of a report: the rows present, and the configured sizes only when they differ. */
export function datasetLine(size: Size, rows: RowsPresent): string {
  const present =
    `${rows.projects} projects, ${rows.tasks} tasks (${rows.liveTasks} not archived), ${rows.members} members, ${rows.timeLogs} time logs; ` +
    `big task ${rows.bigTaskAssignees} assignees, ${rows.bigTaskLogs} logs`;
  return `Dataset: ${size.name}, rows present at the start of the run: ${present} (configured: ${size.projects} projects, ${size.tasks} tasks, ${size.members} members, ${size.logs} time logs)`;
}

/**
 * A load whose answers were not all 2xx measured something else than the endpoint (errors are cheap,
 * or slow): its figures are flagged wherever they are printed, never only counted beside them.
 */
export function notAll2xx(result: { errors: number; requests?: number }): string | undefined {
  if (result.errors === 0) return undefined;
  return `NOT ALL 2xx: ${result.errors}${result.requests === undefined ? '' : ` of ${result.requests}`} answers failed or were not 2xx; the figures do not measure the endpoint`;
}

/**
 * Migrates the target and generates the dataset unless it is already there. A PostgreSQL database
 * holding another version of the dataset (or an interrupted one) is dropped and created again first.
 */
export async function prepare(target: DatabaseTarget, size: Size): Promise<RowsPresent> {
  let db = createDb(target);
  try {
    await migrateToLatest(db);
    if (await datasetPresent(db, size)) {
      log(`dataset "${size.name}" already present`);
      const rows = await rowsPresent(db);
      // Writes of an earlier run (fixed costs, rate changes, renames) left projects out of date.
      await settle(db);
      // The rows earlier runs' refreshes rewrote, vacuumed as autovacuum would (a server may run
      // without it: the machines here do), so a run does not measure the dead rows of the ones before.
      if (target.kind === 'postgres') {
        for (const table of ['task_labor', 'stale_tasks', 'stale_inputs', 'project_figures', 'projects', 'task_member_time', 'task_member_day_time']) {
          await db.raw(`vacuum analyze ${table}`);
        }
      }
      return rows;
    }
    if (target.kind === 'postgres') {
      await db.destroy();
      const name = new URL(target.url).pathname.slice(1);
      const admin = createDb({ kind: 'postgres', url: serverUrl, poolMax: 1 });
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.raw(`create database ${name}`);
      await admin.destroy();
      db = createDb(target);
      await migrateToLatest(db);
    }
    log(`generating dataset "${size.name}"...`);
    const started = Date.now();
    await generate(db, size, log);
    await fillAllParts(db);
    // As autovacuum would a little later: the dead versions of the figures' rows gone, and the running
    // totals' pages marked all-visible, which the index-only reads of them need.
    if (target.kind === 'postgres') {
      for (const table of ['task_labor', 'task_member_time', 'task_member_day_time']) await db.raw(`vacuum analyze ${table}`);
    }
    log(`dataset ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return await rowsPresent(db);
  } finally {
    await db.destroy();
  }
}

/** The database `name` (by default pfs_bench_<size>) on the PostgreSQL server, created when missing. */
export async function postgresTarget(size: Size, name = `pfs_bench_${size.name}`): Promise<DatabaseTarget> {
  const admin = createDb({ kind: 'postgres', url: serverUrl, poolMax: 1 });
  const exists = await admin.raw('select 1 from pg_database where datname = ?', [name]);
  if (exists.rows.length === 0) await admin.raw(`create database ${name}`);
  await admin.destroy();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { kind: 'postgres', url: url.toString() };
}

/**
 * The built service as its own process; the rate limit is off (one address drives it far above any
 * client). `dir`: the worktree whose build is served (another build's, for a before and after).
 */
export function startService(target: DatabaseTarget, port: number, settings: Record<string, string> = {}, dir = '.'): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SEED_DEMO: 'false', RATE_LIMIT_PER_MINUTE: '0', ...settings };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.ADMIN_TOKEN;
  if (target.kind === 'postgres') env.DATABASE_URL = target.url;
  else env.DATA_DIR = target.dataDir;
  // BENCH_SERVICE_LOGS=1 shows the service's log (warnings and errors) beside the report.
  const stdout = process.env.BENCH_SERVICE_LOGS === '1' ? 'inherit' : 'ignore';
  // Started as `npm start` starts it (package.json: its young generation's size).
  return spawn(process.execPath, ['--max-semi-space-size=8', 'dist/src/server.js'], { cwd: dir, env, stdio: ['ignore', stdout, 'inherit'] });
}

/** A port nothing listens on now (the kernel's choice for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export async function waitReady(port: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the service did not become ready');
}

/** Current and peak (VmHWM) resident memory of a process, in MB. */
export function rssOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  let pg = 'n/a';
  try {
    pg = execSync('psql --version', { encoding: 'utf8' }).trim();
  } catch {
    // no psql client
  }
  return `${cpu}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}, ${pg}`;
}

/**
 * `/healthz` is also driven for a few seconds right before each measured load: the machine's speed
 * drifts over the minutes a run takes (by a third and more on a shared machine), so each load's share
 * is also given against the `/healthz` of the same moment, beside the share of the run's first one.
 */
const HEALTHZ_SLICE_SECONDS = 5;

/** How long the `/healthz` slice before a load lasts, for loads of `seconds`. */
export const healthzSliceSeconds = (seconds: number) => Math.min(seconds, HEALTHZ_SLICE_SECONDS);

/**
 * `rps` as a whole percentage of `reference` req/s, for a report; "n/a" when the reference is no
 * throughput (a `/healthz` run that answered nothing, or with errors, is no yardstick).
 */
export function shareOf(rps: number, reference: { rps: number; errors: number }): string {
  return reference.rps > 0 && reference.errors === 0 ? `${((100 * rps) / reference.rps).toFixed(0)}%` : 'n/a';
}

/*
 * CPU time per request, from Linux's /proc: the service's process, the PostgreSQL server's processes,
 * and the rest of the machine (the load generator in the harness's process, the kernel, any other
 * process). On a machine whose cores also run PostgreSQL and the load generator, a share of `/healthz`
 * is bounded by what they cost per request: even a service that cost nothing could answer no more
 * than the cores left to them allow (`ceilingOf`). Measured only against a PostgreSQL server on this
 * machine (`cpuMeasured`), and meaningful while it serves nothing but the benchmark: every process
 * named `postgres` counts as its.
 */

/** CPU ticks used so far: by the service's process, by every `postgres` process, by the whole machine. */
export type CpuTicks = { service: number; postgres: number; machine: number };

/** CPU microseconds per request. */
export type CpuPerRequest = { service: number; postgres: number; rest: number };

function ticksPerSecond(): number {
  try {
    return Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100; // USER_HZ on every Linux build here
  }
}
const TICKS_PER_SECOND = ticksPerSecond();

/** The fields of /proc/<pid>/stat after the process's name: [0] is the line's third field (its state). */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}

/** utime + stime of a process (the line's fields 14 and 15), in ticks; NaN when it is gone. */
function ticksOf(pid: number | string): number {
  const fields = statFields(pid);
  return fields ? Number(fields[11]) + Number(fields[12]) : NaN;
}

/**
 * Ticks of every `postgres` process; the server's first process (the postmaster, whose parent is no
 * `postgres`) also counts what its exited children used (cutime and cstime, the line's fields 16 and
 * 17), so a backend that ends between two readings moves its time there instead of out of the sum.
 */
function postgresTicks(): number {
  const processes = new Map<string, string[]>();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue; // gone meanwhile
    }
    const fields = statFields(pid);
    if (fields) processes.set(pid, fields);
  }
  let ticks = 0;
  for (const fields of processes.values()) {
    ticks += Number(fields[11]) + Number(fields[12]);
    if (!processes.has(fields[1] as string)) ticks += Number(fields[13]) + Number(fields[14]);
  }
  return ticks;
}

/**
 * Busy ticks of the whole machine: user, nice, system, irq and softirq of /proc/stat's cpu line (not
 * idle, iowait, or steal, the time the hypervisor gave to other machines; guest time is in user).
 */
function machineTicks(): number {
  const [user, nice, system, , , irq, softirq] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0);
}

/** Whether CPU per request is measured: on Linux, against a PostgreSQL server on this machine. */
export function cpuMeasured(target: DatabaseTarget): boolean {
  if (target.kind !== 'postgres' || !fs.existsSync('/proc/stat')) return false;
  const host = new URL(target.url).hostname;
  return host === '' || host === 'localhost' || host === '127.0.0.1' || host === '[::1]';
}

function cpuTicks(servicePid: number): CpuTicks {
  return { service: ticksOf(servicePid), postgres: postgresTicks(), machine: machineTicks() };
}

/**
 * Starts measuring CPU for a load (none without `servicePid`): the function returned gives what the
 * `requests` made since cost each, once the load is over.
 */
export function cpuMeter(servicePid: number | undefined): (requests: number) => CpuPerRequest | undefined {
  if (servicePid === undefined) return () => undefined;
  const before = cpuTicks(servicePid);
  return (requests) => cpuPerRequest(before, cpuTicks(servicePid), requests);
}

/** What `requests` cost on average between two readings, in CPU microseconds each (none if the service went away). */
function cpuPerRequest(before: CpuTicks, after: CpuTicks, requests: number): CpuPerRequest | undefined {
  if (requests <= 0 || Number.isNaN(before.service) || Number.isNaN(after.service)) return undefined;
  const micros = (ticks: number) => (ticks * 1e6) / TICKS_PER_SECOND / requests;
  const service = micros(after.service - before.service);
  const postgres = micros(Math.max(0, after.postgres - before.postgres));
  return { service, postgres, rest: Math.max(0, micros(after.machine - before.machine) - service - postgres) };
}

/**
 * The highest share of `/healthz` (`healthz`, a load without errors) an endpoint could reach with a
 * service that cost no CPU at all: the machine's cores spent only on PostgreSQL and the rest, at what
 * they cost per request of it.
 */
function ceilingOf(cpu: CpuPerRequest | undefined, healthz: { rps: number; errors: number }): string {
  const others = cpu ? cpu.postgres + cpu.rest : 0;
  if (others <= 0 || healthz.rps <= 0 || healthz.errors > 0) return 'n/a';
  return `${((100 * (os.cpus().length * 1e6)) / others / healthz.rps).toFixed(0)}%`;
}

/**
 * A report's table of CPU per request: a row for each load measured (`/healthz` first, the reference:
 * no ceiling of its own), the others with their ceiling against `healthz`.
 */
export function cpuTable(loads: readonly { name: string; cpu?: CpuPerRequest }[], healthz: { rps: number; errors: number }): string[] {
  const rows = loads.flatMap(({ name, cpu }, i) => {
    if (!cpu) return [];
    const ceiling = i === 0 ? '' : ceilingOf(cpu, healthz);
    return [`| ${name} | ${cpu.service.toFixed(0)} | ${cpu.postgres.toFixed(0)} | ${cpu.rest.toFixed(0)} | ${(cpu.service + cpu.postgres + cpu.rest).toFixed(0)} | ${ceiling} |`];
  });
  if (rows.length === 0) return [];
  return [
    'CPU per request, from /proc, in microseconds: the service, the PostgreSQL server, the rest of the machine (the load',
    'generator, the kernel, any other process); and the highest share of the first `/healthz` the load could reach if the',
    'service cost nothing, the cores left to PostgreSQL and the rest (bench/support.ts).',
    '',
    '| Load | service | PostgreSQL | rest | all | ceiling with a free service |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ];
}
