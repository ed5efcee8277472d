import { execSync } from 'node:child_process';
import type { DatabaseTarget } from '../src/db/knex';
import { BENCH_TOKEN, SIZES, Size, projectId } from './dataset';
import { commandOption, datasetLine, freePort, log, machine, prepare, serverUrl, startService, waitReady } from './support';

/*
 * npm run bench:rates -- [--size full|small] [--database pfs_rates] [--rounds 6] [--from YYYY-MM-DD] [--budgets none,watched] [--prepare-only]
 *
 * Issue 37's rate writes on the large project (10,000 tasks on the full dataset), on PostgreSQL: a
 * member's own rates (PUT /api/projects/:id/members/:team_member_id/rates) and a rate-card change
 * (PUT /api/projects/:id/rate-card), one request at a time, each a real change (there and back). Each
 * write is timed, then the project's list read right after it (the first read after a write: the
 * figures it made out of date brought current) and once more (from the list cache), beside the same
 * list read just before the write. Then the same on a service started with LIST_CACHE_MB=0, where the
 * list read before the write is rendered too (what "uncached" costs without a write). `--from` dates
 * the writes (default: today, the routes' own default); a back-dated write reprices logged days.
 * The database is its own (`--database`), prepared by bench/support.ts like the others; the service is
 * served from dist/ (`npm run build` first).
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => commandOption(args, name, fallback);
const size: Size = SIZES[option('size', 'full') as Size['name']];
if (!size) throw new Error('--size must be small or full');
const rounds = Number(option('rounds', '6'));
const from = option('from', '');
const budgets = option('budgets', 'none,watched').split(',') as ('none' | 'watched')[];
if (budgets.some((b) => b !== 'none' && b !== 'watched')) throw new Error('--budgets takes none, watched');

type Json = { body?: unknown };

async function timed(port: number, method: string, route: string, body?: unknown): Promise<{ ms: number; body: unknown }> {
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: { authorization: `Bearer ${BENCH_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status >= 300) throw new Error(`${method} ${route} answered ${res.status}: ${text.slice(0, 300)}`);
  return { ms, body: (JSON.parse(text) as Json).body };
}

/** p50 and p99 (nearest rank; with a few samples the p99 is the worst) and the range. */
function stats(times: readonly number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return `${at(0.5).toFixed(0)} / ${at(0.99).toFixed(0)} (${(sorted[0] ?? 0).toFixed(0)}-${(sorted[sorted.length - 1] ?? 0).toFixed(0)})`;
}

function database(name: string): DatabaseTarget {
  const exists = execSync(`psql "${serverUrl}" -Atc "select 1 from pg_database where datname = '${name}'"`).toString().trim();
  if (!exists) execSync(`psql "${serverUrl}" -c "create database ${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { kind: 'postgres', url: url.toString() };
}

type Write = { name: string; run: (port: number, round: number) => Promise<number> };

async function phase(target: DatabaseTarget, label: string, settings: Record<string, string>, rows: string[]): Promise<void> {
  const port = await freePort();
  const child = startService(target, port, settings);
  try {
    await waitReady(port);
    const large = projectId(0);
    const list = `/api/project-finance/project/${large}/tasks`;
    const members = (await timed(port, 'GET', `/api/projects/${large}/members`)).body as { team_member_id: string; job_role_id: string | null }[];
    const member = members.find((m) => m.job_role_id !== null) ?? members[0]!;
    const card = (await timed(port, 'GET', `/api/projects/${large}/rate-card`)).body as { roles: { job_role_id: string; hourly_rate: number | null; bill_rate: number | null }[] };
    const dated = from ? { effective_from: from } : {};
    const writes: Write[] = [
      {
        name: 'PUT member rates',
        run: async (p, round) =>
          (await timed(p, 'PUT', `/api/projects/${large}/members/${member.team_member_id}/rates`, { hourly_rate: 120 + (round % 2), bill_rate: 180 + (round % 2), ...dated })).ms,
      },
      {
        name: 'PUT rate card',
        run: async (p, round) =>
          (
            await timed(p, 'PUT', `/api/projects/${large}/rate-card`, {
              roles: card.roles.map((r, i) => ({
                job_role_id: r.job_role_id,
                hourly_rate: r.hourly_rate === null ? null : Number(r.hourly_rate) + (i === 0 ? round % 2 : 0),
                bill_rate: i === 0 ? 150 + (round % 2) : r.bill_rate === null ? null : Number(r.bill_rate),
              })),
              ...dated,
            })
          ).ms,
      },
    ];
    await timed(port, 'GET', list);
    // Every project of the dataset has a money budget, and so (migration 023's default alerts 80 and
    // 100) a budget watched at the commit of every write (budget-watch.ts): the writes are measured with the
    // large project's alerts emptied (no budget watched: what issue 37's rates alone cost; put back
    // after), and as the dataset has them (`--budgets`).
    const alerts = ((await timed(port, 'GET', `/api/projects/${large}`)).body as { budget_alerts: number[] }).budget_alerts;
    for (const budget of budgets) {
      if (budget === 'none') await timed(port, 'PATCH', `/api/projects/${large}`, { budget_alerts: [] });
      for (const write of writes) {
        // One write first, not counted: the project's first bill rate changes how it prices every task
        // (the stamp's pricing), which recomputes all of them once; later writes are the usual case.
        const first = await write.run(port, 1);
        const firstList = (await timed(port, 'GET', list)).ms;
        log(`${write.name} (budget ${budget}, list cache ${label}), first write ${first.toFixed(0)} ms, list after it ${firstList.toFixed(0)} ms (not counted)`);
        const before: number[] = [];
        const took: number[] = [];
        const after: number[] = [];
        const again: number[] = [];
        for (let round = 0; round < rounds; round++) {
          before.push((await timed(port, 'GET', list)).ms);
          took.push(await write.run(port, round));
          after.push((await timed(port, 'GET', list)).ms);
          again.push((await timed(port, 'GET', list)).ms);
        }
        const line = `| ${write.name} | ${budget} | ${label} | ${stats(took)} | ${stats(before)} | ${stats(after)} | ${stats(again)} |`;
        log(line);
        rows.push(line);
      }
      if (budget === 'none') await timed(port, 'PATCH', `/api/projects/${large}`, { budget_alerts: alerts });
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

async function main() {
  const target = database(option('database', 'pfs_rates'));
  log(`Machine: ${machine()}`);
  const present = await prepare(target, size);
  log(datasetLine(size, present));
  if (args.includes('--prepare-only')) return;
  log(`${rounds} rounds per write, one request at a time, writes dated ${from || 'today (the default)'}; ms p50 / p99 (range)`);
  const rows = [
    `| Write | budget alerts | list cache | write | list before it | list right after it | list again (cache) |`,
    '|---|---|---|---:|---:|---:|---:|',
  ];
  await phase(target, 'on', {}, rows);
  await phase(target, 'off', { LIST_CACHE_MB: '0' }, rows);
  log(`\n${rows.join('\n')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
