import { ChildProcess, execSync, spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import type { DatabaseTarget } from '../src/db/knex';
import { BENCH_TOKEN, BIG_TASK_ID, SIZES, Size, projectId, randomTaskId, taskId } from './dataset';
import { createDb } from '../src/db/knex';
import { commandOption, datasetLine, freePort, log, machine, prepare, rowsPresent, serverUrl, waitReady } from './support';

/*
 * npm run bench:paired -- --base <worktree of the other build> [--head <worktree>: this one] [--size small|full] [--database pfs_paired]
 *                         [--base-database pfs_paired_base] [--duration 1] [--pairs 3] [--connections 10] [--only breakdowns,lists,timelogs,exports]
 *
 * Two builds served at once against one PostgreSQL database, asked in turn: for each load, `pairs`
 * ratios of this build's throughput to the base's, each over sixteen alternating slices of `duration`
 * seconds (see paired()). Both services see the
 * same machine within seconds of each other, so a ratio holds where absolute figures drift. Each
 * build must be built already (`npm run build` in both worktrees); the dataset is bench/dataset.ts's.
 *
 * --base-database: the base served from a database of its own, for a base whose migrations differ
 * (knex refuses a database holding migrations it does not know). Each database is prepared by its own
 * build's bench/support.ts (its migrations, its dataset generator, its settle) with the same size.
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => commandOption(args, name, fallback);
const size = SIZES[option('size', 'small') as Size['name']];
if (!size) throw new Error('--size must be small or full');
const baseDir = path.resolve(option('base', ''));
const duration = Number(option('duration', '1'));
const pairs = Number(option('pairs', '3'));
const connections = Number(option('connections', '10'));
const only = option('only', 'breakdowns,lists,timelogs').split(',');

type Load = { name: string; method?: 'GET' | 'POST'; path: () => string; body?: () => string };
type Slice = { rps: number; p50: number; p99: number; errors: number };
type Service = { name: string; dir: string; port: number; child?: ChildProcess };

function start(service: Service, target: DatabaseTarget, settings: Record<string, string>): void {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(service.port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SEED_DEMO: 'false', RATE_LIMIT_PER_MINUTE: '0', ...settings };
  delete env.DATA_DIR;
  delete env.ADMIN_TOKEN;
  env.DATABASE_URL = (target as { url: string }).url;
  service.child = spawn(process.execPath, ['dist/src/server.js'], { cwd: service.dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function stop(service: Service): Promise<void> {
  const child = service.child;
  if (!child || child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

async function drive(service: Service, load: Load, seconds: number): Promise<Slice> {
  const headers: Record<string, string> = { authorization: `Bearer ${BENCH_TOKEN}` };
  if (load.body) headers['content-type'] = 'application/json';
  const result = await autocannon({
    url: `http://127.0.0.1:${service.port}`,
    connections,
    duration: seconds,
    requests: [{ method: load.method ?? 'GET', headers, setupRequest: (req) => ({ ...req, path: load.path(), ...(load.body ? { body: load.body() } : {}) }) }],
  });
  return { rps: result.requests.total / result.duration, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx };
}

async function check(service: Service, load: Load): Promise<void> {
  const headers: Record<string, string> = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
  const res = await fetch(`http://127.0.0.1:${service.port}${load.path()}`, { method: load.method ?? 'GET', headers, body: load.body?.() });
  if (!res.ok) throw new Error(`${service.name}: ${load.name} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

/**
 * `pairs` ratios of one load, each from four pairs of slices in the order ABBA BAAB ABBA BAAB (A the
 * base, B this build): a drift of the machine's speed during the sixteen slices weighs on both
 * builds alike. A ratio is this build's requests over the base's; one line of the report.
 */
async function paired(base: Service, head: Service, load: Load): Promise<string> {
  for (const service of [base, head]) {
    await check(service, load);
    await drive(service, load, 2);
  }
  const ORDER = 'ABBABAABABBABAAB';
  const ratios: number[] = [];
  const cells: string[] = [];
  for (let i = 0; i < pairs; i++) {
    const total = { A: { rps: 0, p99: 0, errors: 0 }, B: { rps: 0, p99: 0, errors: 0 } };
    for (const letter of ORDER) {
      const side = letter as 'A' | 'B';
      const slice = await drive(side === 'A' ? base : head, load, duration);
      total[side].rps += slice.rps / (ORDER.length / 2);
      total[side].p99 = Math.max(total[side].p99, slice.p99);
      total[side].errors += slice.errors;
    }
    const ratio = total.B.rps / total.A.rps;
    ratios.push(ratio);
    cells.push(`${total.A.rps.toFixed(0)} / ${total.B.rps.toFixed(0)} (p99 ${total.A.p99}/${total.B.p99}, err ${total.A.errors + total.B.errors}) = ${ratio.toFixed(2)}`);
  }
  const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)] as number;
  const line = `| ${load.name} | ${cells.join(' <br> ')} | ${median.toFixed(2)} |`;
  log(line);
  return line;
}

function database(name: string): DatabaseTarget {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const exists = execSync(`psql "${serverUrl}" -Atc "select 1 from pg_database where datname = '${name}'"`).toString().trim();
  if (!exists) execSync(`psql "${serverUrl}" -c "create database ${name}"`);
  return { kind: 'postgres', url: url.toString() };
}

async function main() {
  if (!option('base', '')) throw new Error('--base <directory of the other build> is required');
  const target = database(option('database', 'pfs_paired'));
  const baseDatabase = option('base-database', '');
  const baseTarget = baseDatabase ? database(baseDatabase) : target;
  // The base's database prepared by the base's own harness: its migrations and its code's settle.
  const basePrepare: typeof prepare = baseDatabase
    ? ((await import(pathToFileURL(path.join(baseDir, 'bench/support.ts')).href)) as { prepare: typeof prepare }).prepare
    : prepare;
  const prepareBoth = async () => {
    await prepare(target, size);
    if (baseTarget !== target) await basePrepare(baseTarget, size);
  };
  await prepareBoth();
  log(`Machine: ${machine()}`);
  for (const [label, t] of baseTarget === target ? ([['both', target]] as const) : ([['this build', target], ['base', baseTarget]] as const)) {
    const db = createDb(t);
    try {
      log(`${label}: ${datasetLine(size, await rowsPresent(db))}`);
    } finally {
      await db.destroy();
    }
  }
  log(`${connections} connections; ${pairs} pairs of ${duration} s slices per load`);
  const base: Service = { name: 'base', dir: baseDir, port: await freePort() };
  const head: Service = { name: 'head', dir: path.resolve(option('head', '.')), port: await freePort() };
  const pick = () => randomTaskId(size);
  const member = async (service: Service) => {
    const res = await fetch(`http://127.0.0.1:${service.port}/api/projects/${projectId(1)}/members`, { headers: { authorization: `Bearer ${BENCH_TOKEN}` } });
    return ((await res.json()) as { body: { team_member_id: string }[] }).body[0]!.team_member_id;
  };
  const phases: { label: string; settings: Record<string, string>; loads: (memberId: string) => Load[] }[] = [
    {
      label: 'defaults',
      settings: {},
      loads: (memberId) => [
        ...(only.includes('breakdowns')
          ? [
              { name: 'breakdown, random task', path: () => `/api/project-finance/task/${pick()}/breakdown` },
              { name: 'breakdown, big task', path: () => `/api/project-finance/task/${BIG_TASK_ID}/breakdown` },
            ]
          : []),
        ...(only.includes('lists') ? [{ name: `project list, ${size.mediumProjectTasks} tasks (cached)`, path: () => `/api/project-finance/project/${projectId(1)}/tasks` }] : []),
        // Not in the default set: the isolation scenario's exports of the large project, one at a time per connection.
        ...(only.includes('exports')
          ? (['csv', 'xlsx'] as const).map((format) => ({
              name: `${format.toUpperCase()} export, ${size.largeProjectTasks}-task project`,
              path: () => `/api/project-finance/project/${projectId(0)}/export?format=${format}`,
            }))
          : []),
        ...(only.includes('timelogs')
          ? [
              {
                name: `time-log POST, random tasks of a ${size.mediumProjectTasks}-task project`,
                method: 'POST' as const,
                path: () => `/api/tasks/${taskId(1, Math.floor(Math.random() * size.mediumProjectTasks))}/time-logs`,
                body: () => JSON.stringify({ team_member_id: memberId, seconds: 60 + Math.floor(Math.random() * 3600) }),
              },
            ]
          : []),
      ],
    },
    {
      label: 'list cache off',
      settings: { LIST_CACHE_MB: '0' },
      loads: () => (only.includes('lists') ? [{ name: `project list, ${size.mediumProjectTasks} tasks (cache off)`, path: () => `/api/project-finance/project/${projectId(1)}/tasks` }] : []),
    },
  ];
  const lines = ['| Load | base / this build, mean req/s of 8 slices each (worst p99 ms, errors) = ratio, 3 times | median ratio |', '|---|---|---:|'];
  log(lines.join('\n'));
  for (const phase of phases) {
    // Every project's figures current and breakdown parts filled before each phase: the writes of the
    // one before left work that the service idle in each slice (the one not asked) would do meanwhile.
    if (phase !== phases[0]) await prepareBoth();
    try {
      start(base, baseTarget, phase.settings);
      start(head, target, phase.settings);
      for (const service of [base, head]) await waitReady(service.port);
      const memberId = await member(head);
      if (baseTarget !== target && (await member(base)) !== memberId) throw new Error('the two databases hold different datasets');
      for (const load of phase.loads(memberId)) lines.push(await paired(base, head, load));
    } finally {
      for (const service of [base, head]) await stop(service);
    }
  }
  log(`\n${lines.join('\n')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
