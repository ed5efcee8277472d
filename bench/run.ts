import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { DatabaseTarget } from '../src/db/knex';
import { BENCH_TOKEN, BIG_TASK_ID, SIZES, Size, projectId, randomTaskId } from './dataset';
import {
  CpuPerRequest,
  RowsPresent,
  commandOption,
  cpuMeasured,
  cpuMeter,
  cpuTable,
  datasetLine,
  healthzSliceSeconds,
  log,
  machine,
  notAll2xx,
  postgresTarget,
  prepare,
  rssOf,
  shareOf,
  startService,
  waitReady,
} from './support';

/*
 * npm run bench -- [--size small|full] [--backend postgres|pglite|both] [--duration 15] [--warmup 3]
 *                  [--connections 10] [--prepare-only]
 *
 * Builds the service, prepares the dataset (generated once, then reused), starts the service as its
 * own process, warms up, and drives one endpoint at a time with autocannon at fixed concurrency.
 * Reports requests/s, p50, p99, errors, peak RSS, and each endpoint's throughput as a share of
 * /healthz measured in the same run: of the first /healthz, and of a /healthz slice driven right before
 * the endpoint. Results go to bench/results/ (JSON and Markdown).
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => commandOption(args, name, fallback);
const size = SIZES[option('size', 'small') as Size['name']];
if (!size) throw new Error('--size must be small or full');
const backendArg = option('backend', size.name === 'full' ? 'postgres' : 'both');
const duration = Number(option('duration', '15'));
const warmup = Number(option('warmup', '3'));
const connections = Number(option('connections', '10'));
const PORT = Number(option('port', '3456'));
const resultsDir = path.resolve('bench/results');

type Endpoint = { name: string; method?: 'GET' | 'PUT'; paths: () => string; body?: () => string; auth: boolean };

function listEndpoints(suffix: string): Endpoint[] {
  return [
    { name: `project list, ${size.mediumProjectTasks} tasks${suffix}`, paths: () => `/api/project-finance/project/${projectId(1)}/tasks`, auth: true },
    { name: `project list, ${size.largeProjectTasks} tasks${suffix}`, paths: () => `/api/project-finance/project/${projectId(0)}/tasks`, auth: true },
  ];
}

const HEALTHZ: Endpoint = { name: '/healthz', paths: () => '/healthz', auth: false };

function endpoints(): Endpoint[] {
  const pick = () => randomTaskId(size);
  return [
    HEALTHZ,
    { name: 'breakdown, random task', paths: () => `/api/project-finance/task/${pick()}/breakdown`, auth: true },
    { name: `breakdown, big task (${size.bigTaskAssignees} assignees, ${size.bigTaskLogs} logs)`, paths: () => `/api/project-finance/task/${BIG_TASK_ID}/breakdown`, auth: true },
    ...listEndpoints(''),
    { name: 'fixed-cost update, random task', method: 'PUT', paths: () => `/api/project-finance/task/${pick()}/fixed-cost`, body: () => JSON.stringify({ fixed_cost: Math.floor(Math.random() * 100000) / 100 }), auth: true },
  ];
}

/*
 * The lists run twice: with the service's defaults (a list is rendered once, then served from the
 * list cache while its project's revision holds: the load repeats one list with no writes between),
 * and on a service started with LIST_CACHE_MB=0, where every request reads and renders the list (what
 * the first read after each write costs).
 */
const PHASES: { label: string; settings: Record<string, string>; endpoints: () => Endpoint[] }[] = [
  { label: 'with the defaults', settings: {}, endpoints },
  { label: 'with the list cache off', settings: { LIST_CACHE_MB: '0' }, endpoints: () => listEndpoints(', list cache off') },
];

/** With `cpu`, what each request cost the service, the PostgreSQL server and the rest of the machine (support.ts). */
type Result = { endpoint: string; rps: number; p50: number; p99: number; errors: number; requests: number; cpu?: CpuPerRequest };

/** An endpoint's result, and `/healthz`'s in the slice driven right before it (none for `/healthz` itself). */
type Measured = Result & { healthzBefore?: Result };

function headersOf(endpoint: Endpoint): Record<string, string> {
  const headers: Record<string, string> = endpoint.auth ? { authorization: `Bearer ${BENCH_TOKEN}` } : {};
  if (endpoint.body) headers['content-type'] = 'application/json';
  return headers;
}

/** One request per endpoint before any load: a benchmark of error responses would measure nothing. */
async function checkAnswers(endpoint: Endpoint): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${PORT}${endpoint.paths()}`, { method: endpoint.method ?? 'GET', headers: headersOf(endpoint), body: endpoint.body?.() });
  if (!res.ok) throw new Error(`${endpoint.name} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

async function drive(endpoint: Endpoint, seconds: number, servicePid?: number): Promise<Result> {
  const headers = headersOf(endpoint);
  const cpu = cpuMeter(servicePid);
  const result = await autocannon({
    url: `http://127.0.0.1:${PORT}`,
    connections,
    duration: seconds,
    requests: [
      {
        method: endpoint.method ?? 'GET',
        headers,
        setupRequest: (req) => ({ ...req, path: endpoint.paths(), ...(endpoint.body ? { body: endpoint.body() } : {}) }),
      },
    ],
  });
  return {
    endpoint: endpoint.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    requests: result.requests.total,
    cpu: cpu(result.requests.total),
  };
}

async function benchBackend(kind: 'postgres' | 'pglite') {
  const target: DatabaseTarget =
    kind === 'postgres' ? await postgresTarget(size) : { kind: 'pglite', dataDir: path.resolve(`bench/data/pglite-${size.name}`) };
  log(`\n## ${kind} (${size.name} dataset)`);
  const rows = await prepare(target, size);
  log(datasetLine(size, rows));
  if (args.includes('--prepare-only')) return undefined;
  const results: Measured[] = [];
  const rss = { start: 0, peak: 0, peaks: [] as number[] };
  // Against a PostgreSQL server on this machine only: PGlite's work is the service's own.
  const measureCpu = cpuMeasured(target);
  for (const phase of PHASES) {
    const child = startService(target, PORT, phase.settings);
    try {
      await waitReady(PORT);
      const startRss = rssOf(child.pid as number).rss;
      if (rss.start === 0) rss.start = startRss;
      let peak = startRss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssOf(child.pid as number).rss);
      }, 200);
      for (const endpoint of phase.endpoints()) {
        await checkAnswers(endpoint);
        await drive(endpoint, warmup);
        const healthzBefore = endpoint === HEALTHZ ? undefined : await drive(HEALTHZ, healthzSliceSeconds(duration));
        const result: Measured = { ...(await drive(endpoint, duration, measureCpu ? child.pid : undefined)), healthzBefore };
        results.push(result);
        const before = healthzBefore ? ` (/healthz just before: ${healthzBefore.rps.toFixed(0)} req/s, errors ${healthzBefore.errors})` : '';
        const cpu = result.cpu ? `; CPU µs per request: service ${result.cpu.service.toFixed(0)}, PostgreSQL ${result.cpu.postgres.toFixed(0)}, rest ${result.cpu.rest.toFixed(0)}` : '';
        const flag = [result, healthzBefore].flatMap((r) => (r && notAll2xx(r) ? [`${r.endpoint}: ${notAll2xx(r)}`] : []));
        log(`  ${flag.length ? '[FLAGGED] ' : ''}${endpoint.name}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}${before}${cpu}`);
        for (const line of flag) log(`    ${line}`);
      }
      clearInterval(sampler);
      const phasePeak = Math.max(peak, rssOf(child.pid as number).peak);
      rss.peaks.push(phasePeak);
      rss.peak = Math.max(rss.peak, phasePeak);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  return { backend: kind, results, rss, rows };
}

function markdown(run: { backend: string; results: Measured[]; rss: { start: number; peak: number; peaks: number[] }; rows: RowsPresent }): string {
  const healthz = run.results[0] ?? { rps: 0, errors: 0 };
  // A load whose answers were not all 2xx is marked in its row and named under the table.
  const flagged = run.results.flatMap((r) => [r, ...(r.healthzBefore ? [{ ...r.healthzBefore, endpoint: `/healthz before ${r.endpoint}` }] : [])]).filter((r) => notAll2xx(r));
  const rows = run.results.map((r) => {
    const before = r.healthzBefore ? `${r.healthzBefore.rps.toFixed(0)}${notAll2xx(r.healthzBefore) ? ' **(not all 2xx)**' : ''} | ${shareOf(r.rps, r.healthzBefore)}` : ' | ';
    const mark = notAll2xx(r) ? ' **(not all 2xx)**' : '';
    return `| ${r.endpoint}${mark} | ${r.rps.toFixed(0)}${mark} | ${r.p50} | ${r.p99} | ${r.errors} | ${shareOf(r.rps, healthz)} | ${before} |`;
  });
  return [
    `### ${run.backend}, ${size.name} dataset`,
    '',
    datasetLine(size, run.rows),
    '',
    '| Endpoint | req/s | p50 ms | p99 ms | errors | share of /healthz | /healthz just before, req/s | share of it |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    ...(flagged.length ? ['**Loads whose answers were not all 2xx (their figures measure errors, not the endpoint):**', '', ...flagged.map((r) => `- ${r.endpoint}: ${notAll2xx(r)}`), ''] : []),
    ...cpuTable(run.results.map((r) => ({ name: r.endpoint, cpu: r.cpu })), healthz),
    `RSS of the service: ${run.rss.start.toFixed(0)} MB after start, ${run.rss.peak.toFixed(0)} MB at peak ` +
      `(${run.rss.peaks.map((mb, i) => `${mb.toFixed(0)} MB ${PHASES[i]?.label}`).join(', ')}).`,
    '',
  ].join('\n');
}

async function main() {
  log(`Machine: ${machine()}`);
  log(`Dataset configured: ${JSON.stringify(size)} (the rows present are counted at the start of each backend's run)`);
  log(`Load: autocannon, ${connections} connections, ${warmup} s warm-up, ${healthzSliceSeconds(duration)} s of /healthz, then ${duration} s per endpoint`);
  execSync('npm run --silent build', { stdio: 'inherit' });
  const backends = backendArg === 'both' ? (['postgres', 'pglite'] as const) : [backendArg as 'postgres' | 'pglite'];
  const runs = [];
  for (const backend of backends) {
    const run = await benchBackend(backend);
    if (run) runs.push(run);
  }
  if (runs.length === 0) return;
  fs.mkdirSync(resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const report = [
    `Machine: ${machine()}`,
    `Dataset: ${size.name}; the rows present at the start of each backend's run are given under its heading`,
    `Command: npm run bench -- ${args.join(' ')}`.trim(),
    `Load: autocannon, ${connections} connections, ${warmup} s warm-up, ${healthzSliceSeconds(duration)} s of /healthz, then ${duration} s per endpoint, one endpoint at a time`,
    '',
    ...runs.map(markdown),
  ].join('\n');
  fs.writeFileSync(path.join(resultsDir, `${size.name}-${stamp}.json`), JSON.stringify({ size, runs }, null, 2));
  fs.writeFileSync(path.join(resultsDir, `${size.name}-${stamp}.md`), `${report}\n`);
  log(`\n${report}\n\nWritten to bench/results/${size.name}-${stamp}.md`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
