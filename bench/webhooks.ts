import { ChildProcess, execSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createDb, DatabaseTarget } from '../src/db/knex';
import { migrateToLatest } from '../src/db/migrate';
import { createTeamWithAdmin } from '../src/teams/teams.service';
import { commandOption, cpuMeter, freePort, log, machine, rssOf, serverUrl, startService, waitReady } from './support';

/*
 * npm run bench:webhooks -- [--backend postgres|pglite] [--database pfs_webhooks] [--rate 200]
 *                           [--duration 20] [--backlog 10000]
 *
 * Issue 38's webhook targets, against the built service in its own process (WEBHOOK_ALLOW_PRIVATE=true)
 * and receivers in this one, on a database of its own (dropped and made again):
 *   a. delivery lag (event occurred_at to the receiver's arrival) while `rate` time-log POSTs a second
 *      are made through HTTP, open loop, for `duration` seconds; with the POSTs' latency;
 *   c. the same load with a second webhook whose receiver never answers: the POSTs' latency and the
 *      healthy webhook's lag, to set beside (a);
 *   b. `backlog` events queued for a webhook while the service is down (written through SQL), then the
 *      time from the restarted service's readiness until the receiver has them all;
 *   d. the service's RSS (VmRSS of /proc/<pid>/status every 250 ms) through all of it.
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => commandOption(args, name, fallback);
const backend = option('backend', 'postgres') as 'postgres' | 'pglite';
const rate = Number(option('rate', '200'));
const duration = Number(option('duration', '20'));
const backlog = Number(option('backlog', '10000'));
const TASKS = 20;
const PROJECTS = 10;

const quantile = (values: readonly number[], q: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
};
const ms = (n: number) => `${Math.round(n)} ms`;

/** The receivers: /ok/<name> answers 204 and records each event's lag; /hang never answers. */
async function startReceivers() {
  const arrivals = new Map<string, Map<string, number>>();
  const hanging = new Set<http.ServerResponse>();
  let hangRequests = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      if (req.url === '/hang') {
        hangRequests += 1;
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const name = (req.url ?? '').replace('/ok/', '');
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; occurred_at: string };
      let seen = arrivals.get(name);
      if (!seen) arrivals.set(name, (seen = new Map()));
      // At least once: the first arrival counts.
      if (!seen.has(event.id)) seen.set(event.id, at - Date.parse(event.occurred_at));
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (p: string) => `${base}${p}`,
    lags: (name: string) => arrivals.get(name) ?? new Map<string, number>(),
    hangingNow: () => hanging.size,
    hangRequests: () => hangRequests,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Ctx = { port: number; token: string; child: ChildProcess };
// Idle sockets closed before the service's keep-alive timeout (5 s) would: else one reused as the service closes it is a reset.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4000 });

function call(ctx: Ctx, method: string, url: string, body?: unknown): Promise<{ status: number; body: { body: Record<string, unknown> } }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { host: '127.0.0.1', port: ctx.port, path: url, method, agent, headers: { authorization: `Bearer ${ctx.token}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The service's RSS, sampled every 250 ms, the highest kept per phase. */
function rssSampler(pid: () => number | undefined) {
  let peak = 0;
  let phasePeak = 0;
  const timer = setInterval(() => {
    const p = pid();
    if (p === undefined) return;
    try {
      const { rss } = rssOf(p);
      peak = Math.max(peak, rss);
      phasePeak = Math.max(phasePeak, rss);
    } catch {
      // the process is gone (a restart)
    }
  }, 250);
  return {
    phase: () => {
      const value = phasePeak;
      phasePeak = 0;
      return value;
    },
    peak: () => peak,
    stop: () => clearInterval(timer),
  };
}

/** `rate` time-log POSTs a second for `seconds`, open loop (sent on schedule, whatever the answers). */
async function writeLoad(ctx: Ctx, tasks: readonly string[], member: string, seconds: number) {
  const latencies: number[] = [];
  const acked: string[] = [];
  let errors = 0;
  const statuses = new Map<string, number>();
  const failed = (what: string) => {
    errors += 1;
    statuses.set(what, (statuses.get(what) ?? 0) + 1);
  };
  let sent = 0;
  const pending = new Set<Promise<void>>();
  const started = Date.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = Date.now() - started;
      if (elapsed >= seconds * 1000) {
        clearInterval(timer);
        resolve();
        return;
      }
      const due = Math.floor((elapsed / 1000) * rate);
      while (sent < due) {
        const task = tasks[sent % tasks.length] as string;
        sent += 1;
        const t0 = performance.now();
        const p = call(ctx, 'POST', `/api/tasks/${task}/time-logs`, { team_member_id: member, seconds: 60 })
          .then((res) => {
            latencies.push(performance.now() - t0);
            if (res.status === 201) acked.push(String(res.body.body.id));
            else failed(String(res.status));
          })
          .catch((err: Error) => failed(err.message))
          .finally(() => pending.delete(p));
        pending.add(p);
      }
    }, 5);
  });
  await Promise.all([...pending]);
  return { latencies, acked, errors, statuses, sent, seconds: (Date.now() - started) / 1000 };
}

async function waitUntil(condition: () => boolean, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

async function main() {
  execSync('npm run --silent build', { stdio: 'inherit' });
  let target: DatabaseTarget;
  let root: string | undefined;
  if (backend === 'postgres') {
    const name = option('database', 'pfs_webhooks');
    const admin = createDb({ kind: 'postgres', url: serverUrl, poolMax: 1 });
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.raw(`create database ${name}`);
    await admin.destroy();
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    target = { kind: 'postgres', url: url.toString() };
  } else {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-bench-webhooks-'));
    target = { kind: 'pglite', dataDir: path.join(root, 'data') };
  }
  let db = createDb(target);
  await migrateToLatest(db);
  const { token } = await createTeamWithAdmin(db, `webhook bench ${Date.now()}`);
  await db.destroy();

  const receivers = await startReceivers();
  const port = await freePort();
  const settings = { WEBHOOK_ALLOW_PRIVATE: 'true' };
  const ctx: Ctx = { port, token, child: startService(target, port, settings) };
  const rss = rssSampler(() => ctx.child.pid);
  const report: string[] = [`Machine: ${machine()}`, `Command: npm run bench:webhooks -- ${args.join(' ')}`.trim(), `Backend: ${backend}; ${rate} time-log POSTs/s for ${duration} s per phase, ${TASKS} tasks in ${PROJECTS} projects, open loop`];
  try {
    await waitReady(port);
    // Tasks in several projects: a time log takes its project's row shared, and many share-lockers of
    // one row at once cost PostgreSQL a multixact each (the write path's, not the deliveries').
    const projects: string[] = [];
    for (let i = 0; i < PROJECTS; i++) projects.push(String((await call(ctx, 'POST', '/api/projects', { name: `webhook bench ${i}` })).body.body.id));
    const member = String((await call(ctx, 'POST', '/api/team-members', { name: 'Bench member' })).body.body.id);
    const tasks: string[] = [];
    for (let i = 0; i < TASKS; i++) tasks.push(String((await call(ctx, 'POST', `/api/projects/${projects[i % PROJECTS]}/tasks`, { name: `task ${i}` })).body.body.id));
    const register = async (url: string) => {
      const res = await call(ctx, 'POST', '/api/webhooks', { url, event_types: ['time_log.created'] });
      if (res.status !== 201) throw new Error(`could not register ${url}: ${JSON.stringify(res.body)}`);
      return String(res.body.body.id);
    };
    await register(receivers.url('/ok/a'));
    rss.phase();

    const phase = async (label: string, seconds = duration) => {
      const before = receivers.lags('a').size;
      const cpu = cpuMeter(ctx.child.pid);
      const load = await writeLoad(ctx, tasks, member, seconds);
      const all = await waitUntil(() => receivers.lags('a').size >= before + load.acked.length, 120_000);
      const perWrite = cpu(load.acked.length)?.service;
      const lags = [...receivers.lags('a').values()].slice(before);
      const line =
        `${label}: ${load.acked.length} logs written (${(load.acked.length / load.seconds).toFixed(0)}/s, ${load.errors} errors${load.errors ? `: ${[...load.statuses].map(([k, v]) => `${v} x ${k}`).join(', ')}` : ''}); ` +
        `POST latency p50 ${ms(quantile(load.latencies, 0.5))}, p99 ${ms(quantile(load.latencies, 0.99))}, max ${ms(Math.max(...load.latencies))}; ` +
        `delivery lag p50 ${ms(quantile(lags, 0.5))}, p99 ${ms(quantile(lags, 0.99))}, max ${ms(Math.max(...lags))}${all ? '' : ` [FLAGGED: ${lags.length} of ${load.acked.length} delivered]`}; ` +
        `the service's CPU ${perWrite?.toFixed(0)} µs a write (its deliveries included); peak RSS ${rss.phase().toFixed(0)} MB; load average ${os.loadavg()[0]?.toFixed(1)}`;
      log(line);
      report.push(line);
    };

    // A warm-up at the same rate (the service just started: its code not yet optimised, the tasks' figures cold).
    await phase('warm-up (not a measurement)', 5);
    await phase('a. one healthy webhook');
    const hang = await register(receivers.url('/hang'));
    await phase('c. a healthy webhook and one that never answers');
    const hangLine = `   the hanging receiver: ${receivers.hangRequests()} requests got, ${receivers.hangingNow()} open now`;
    log(hangLine);
    report.push(hangLine);
    await call(ctx, 'DELETE', `/api/webhooks/${hang}`);

    // b. A backlog: events queued for a webhook while the service is down, then the restart.
    const backlogHook = await register(receivers.url('/ok/b'));
    ctx.child.kill('SIGTERM');
    await new Promise((resolve) => (ctx.child.exitCode !== null ? resolve(undefined) : ctx.child.once('exit', resolve)));
    db = createDb(target);
    const teamId = String((await db('webhooks').where({ id: backlogHook }).first('team_id')).team_id);
    await db.raw(
      `with event as (
         insert into events (team_id, type, occurred_at, data)
         select :teamId, 'time_log.created', now(), jsonb_build_object('n', n) from generate_series(1, :count) n
         returning id
       )
       insert into webhook_deliveries (team_id, webhook_id, event_id, next_attempt_at, created_at)
       select :teamId, :hook, event.id, now(), now() from event`,
      { teamId, hook: backlogHook, count: backlog },
    );
    await db.destroy();
    const spawned = Date.now();
    ctx.child = startService(target, port, settings);
    await waitReady(port);
    const ready = Date.now();
    const cpu = cpuMeter(ctx.child.pid);
    const done = await waitUntil(() => receivers.lags('b').size >= backlog, 300_000);
    const finished = Date.now();
    const perEvent = cpu(backlog)?.service;
    const got = receivers.lags('b').size;
    const line =
      `b. ${backlog} queued events: ${done ? 'all' : `[FLAGGED] only ${got}`} delivered ${((finished - ready) / 1000).toFixed(1)} s after the restarted service was ready ` +
      `(${((finished - spawned) / 1000).toFixed(1)} s after its start; ${(got / ((finished - ready) / 1000)).toFixed(0)} events/s; the service's CPU ${perEvent?.toFixed(0)} µs an event); peak RSS ${rss.phase().toFixed(0)} MB; load average ${os.loadavg()[0]?.toFixed(1)}`;
    log(line);
    report.push(line);
    const peakLine = `d. peak RSS through every phase: ${rss.peak().toFixed(0)} MB`;
    report.push(peakLine);
  } finally {
    rss.stop();
    ctx.child.kill('SIGTERM');
    await receivers.close();
    agent.destroy();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  }
  log('');
  log(report.join('\n'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
