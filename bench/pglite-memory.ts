import { ChildProcess, execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, log, machine, rssOf } from './support';

/*
 * npm run bench:memory
 *
 * Resident memory of the built service on embedded PGlite: a first start on a new data directory (with
 * the demo data, as `npm start` does) and a later start on the same directory, each measured once it
 * is listening and again after a few requests (every demo breakdown and list, a write). Then the parts
 * of it, each in a process of its own: Node alone, PGlite creating a new directory (initdb), PGlite
 * opening an existing one with its default shared_buffers and with the service's.
 */

const ADMIN_TOKEN = 'pft_bench_memory_admin_token_0123456789';

async function waitReady(child: ChildProcess, port: number): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function get(port: number, url: string): Promise<{ body: Record<string, unknown>[] & Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return (await res.json()) as { body: Record<string, unknown>[] & Record<string, unknown> };
}

/** Every demo project's list and export and every task's breakdown, then one write. */
async function someRequests(port: number): Promise<number> {
  let count = 0;
  const projects = (await get(port, '/api/projects')).body;
  count++;
  for (const project of projects) {
    const list = (await get(port, `/api/project-finance/project/${String(project.id)}/tasks`)).body;
    await fetch(`http://127.0.0.1:${port}/api/project-finance/project/${String(project.id)}/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.arrayBuffer());
    count += 2;
    for (const task of list.tasks as { id: string }[]) {
      await get(port, `/api/project-finance/task/${task.id}/breakdown?include_subtasks=true`);
      count++;
    }
  }
  const write = await fetch(`http://127.0.0.1:${port}/api/job-roles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Bench role ${Date.now()}` }),
  });
  if (write.status !== 201) throw new Error(`POST /api/job-roles: ${write.status}`);
  return count + 1;
}

const mb = (n: number) => `${n.toFixed(0)} MB`;

async function measureStart(label: string, dataDir: string): Promise<void> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SEED_DEMO: 'true', RATE_LIMIT_PER_MINUTE: '0', DATA_DIR: dataDir, ADMIN_TOKEN };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['dist/src/server.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await waitReady(child, port);
    const listening = rssOf(child.pid as number);
    const requests = await someRequests(port);
    const after = rssOf(child.pid as number);
    log(`${label.padEnd(12)} listening: RSS ${mb(listening.rss)} (peak ${mb(listening.peak)}); after ${requests} requests: RSS ${mb(after.rss)} (peak ${mb(after.peak)})`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

/** One PGlite in a bare Node process: its RSS once open (and one query run). */
function measurePart(label: string, dataDir: string | undefined, sharedBuffers?: string): Promise<void> {
  const script = `
    const { PGlite } = require(process.argv[1]);
    const fs = require('fs');
    const kb = (f) => Number(new RegExp(f + ':\\\\s+(\\\\d+)').exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
    (async () => {
      if (process.argv[2]) {
        const opts = process.argv[3] ? { startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=' + process.argv[3]] } : {};
        const pg = await PGlite.create(process.argv[2], opts);
        await pg.query('select count(*) from pg_class');
      }
      console.log(kb('VmRSS') + ' ' + kb('VmHWM'));
      process.exit(0);
    })();`;
  const args = ['-e', script, require.resolve('@electric-sql/pglite'), dataDir ?? '', sharedBuffers ?? ''];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += String(chunk)));
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${label}: exit ${code}`));
      const [rss, peak] = out.trim().split(' ').map((kb) => Number(kb) / 1024) as [number, number];
      log(`${label.padEnd(48)} RSS ${mb(rss)} (peak ${mb(peak)})`);
      resolve();
    });
  });
}

async function main() {
  execSync('npm run --silent build', { stdio: 'inherit' });
  log(`machine: ${machine()}`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-memory-'));
  try {
    const dataDir = path.join(root, 'data');
    log('the service (built, LOG_LEVEL=warn, demo data):');
    await measureStart('first start', dataDir);
    await measureStart('later start', dataDir);
    log('its parts, each in a process of its own:');
    await measurePart('Node.js alone', undefined);
    await measurePart('PGlite creating a new directory (initdb)', path.join(root, 'fresh'));
    await measurePart('PGlite on an existing one, shared_buffers 128MB', dataDir, '128MB');
    await measurePart('PGlite on an existing one, shared_buffers 32MB', dataDir, '32MB');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
