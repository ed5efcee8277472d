import { execSync } from 'node:child_process';
import autocannon from 'autocannon';
import { BENCH_TOKEN, SIZES, idOf, projectId, randomTaskId } from './dataset';
import { commandOption, datasetLine, log, machine, notAll2xx, postgresTarget, prepare, rssOf, startService, waitReady } from './support';

/*
 * npm run soak -- [--duration 60] [--connections 50]
 *
 * Mixed reads and writes on PostgreSQL (small dataset): every connection cycles through a random
 * task's breakdown, the 1,000-task project list, a time log on a random task and a fixed-cost update.
 * Reports requests, errors (must be 0) and the service's RSS at start and end.
 */
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => commandOption(args, name, fallback);
const duration = Number(option('duration', '60'));
const connections = Number(option('connections', '50'));
const PORT = 3457;
const size = SIZES.small;

async function main() {
  execSync('npm run --silent build', { stdio: 'inherit' });
  const target = await postgresTarget(size);
  const rows = await prepare(target, size);
  const child = startService(target, PORT);
  try {
    await waitReady(PORT);
      // Any member of the team may log time; members are md5('m' || j) for j < members.
    const headers = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
    const start = rssOf(child.pid as number);
    const result = await autocannon({
      url: `http://127.0.0.1:${PORT}`,
      connections,
      duration,
      requests: [
        { method: 'GET', headers, setupRequest: (req) => ({ ...req, path: `/api/project-finance/task/${randomTaskId(size)}/breakdown` }) },
        { method: 'GET', headers, path: `/api/project-finance/project/${projectId(1)}/tasks` },
        {
          method: 'POST',
          headers,
          setupRequest: (req) => ({
            ...req,
            path: `/api/tasks/${randomTaskId(size)}/time-logs`,
            body: JSON.stringify({ team_member_id: idOf(`m${Math.floor(Math.random() * size.members)}`), seconds: 60 + Math.floor(Math.random() * 3600) }),
          }),
        },
        {
          method: 'PUT',
          headers,
          setupRequest: (req) => ({ ...req, path: `/api/project-finance/task/${randomTaskId(size)}/fixed-cost`, body: JSON.stringify({ fixed_cost: Math.floor(Math.random() * 100000) / 100 }) }),
        },
      ],
    });
    const end = rssOf(child.pid as number);
    const errors = result.errors + result.timeouts + result.non2xx;
    const report = [
      `Machine: ${machine()}`,
      `Command: npm run soak -- ${args.join(' ')}`.trim(),
      datasetLine(size, rows),
      `Soak: ${duration} s, ${connections} connections, PostgreSQL, small dataset; each connection cycles breakdown, 1,000-task list, time log, fixed-cost update`,
      ...(errors ? [`[FLAGGED] ${notAll2xx({ errors, requests: result.requests.total })}`] : []),
      `Requests: ${result.requests.total} (${result.requests.average.toFixed(0)}/s), p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
      `Errors: ${errors} (connection errors ${result.errors}, time-outs ${result.timeouts}, non-2xx ${result.non2xx})`,
      `RSS: ${start.rss.toFixed(0)} MB at start, ${end.rss.toFixed(0)} MB at end, ${end.peak.toFixed(0)} MB peak`,
    ].join('\n');
    log(`\n${report}`);
    process.exitCode = errors === 0 ? 0 : 1;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
