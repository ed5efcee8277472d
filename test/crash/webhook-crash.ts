import { ChildProcess, execSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createDb, DatabaseTarget } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createTeamWithAdmin } from '../../src/teams/teams.service';
import { commandOption, freePort, startService } from '../../bench/support';
import { scratchDatabase } from './scratch-database';

/*
 * npm run crash-test:webhooks [-- --backend postgres|pglite|both] [--rounds 3]
 *
 * Time logs are written while their events are delivered to a webhook receiver in this process, and
 * the service is killed with SIGKILL mid-stream (writes and deliveries in flight), restarted on the
 * same database, and so on for several rounds. Then, the service running: every acknowledged time log
 * has its event in the feed exactly once, in a seq that only grows, and every such event reaches the
 * receiver (at least once, with a valid signature). A delivery in flight at a kill is leased for a
 * minute, so the last check waits for it (on the receiver, not on a clock).
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => commandOption(args, name, fallback);
const rounds = Number(option('rounds', '3'));

type Receiver = { url: string; ids: Map<string, number>; bad: number; close(): Promise<void> };

/** Records each delivery's webhook-id (with how often it came) and counts the ones that do not verify. */
async function startReceiver(secret: () => string | undefined): Promise<Receiver> {
  const ids = new Map<string, number>();
  const receiver = { bad: 0 } as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const key = secret();
      try {
        if (!key) throw new Error('no secret yet');
        new Webhook(key).verify(body, req.headers as Record<string, string>);
        const id = String(req.headers['webhook-id']);
        ids.set(id, (ids.get(id) ?? 0) + 1);
      } catch {
        receiver.bad += 1;
      }
      // A little later, so that kills find deliveries in flight.
      setTimeout(() => res.writeHead(204).end(), 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.ids = ids;
  receiver.close = () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });
  return receiver;
}

let base = '';
async function start(target: DatabaseTarget): Promise<ChildProcess> {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const child = startService(target, port, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited before it was ready (code ${child.exitCode})`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function api(token: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as { body: Record<string, unknown> & { id: string } } };
}

const exited = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve)));

async function runBackend(kind: 'postgres' | 'pglite'): Promise<string[]> {
  const { target, cleanup } = await scratchDatabase(kind, 'pfs_webhook_crash');
  let secret: string | undefined;
  const receiver = await startReceiver(() => secret);
  const acked = new Set<string>();
  const problems: string[] = [];
  try {
    const db = createDb(target);
    await migrateToLatest(db);
    const { token } = await createTeamWithAdmin(db, `webhook crash ${Date.now()}`);
    await db.destroy();
    let child = await start(target);
    const project = (await api(token, 'POST', '/api/projects', { name: 'webhook crash' })).body.body;
    const member = (await api(token, 'POST', '/api/team-members', { name: 'Crash member' })).body.body;
    const task = (await api(token, 'POST', `/api/projects/${project.id}/tasks`, { name: 'crash task' })).body.body;
    const hook = await api(token, 'POST', '/api/webhooks', { url: receiver.url, event_types: ['time_log.created'] });
    if (hook.status !== 201) throw new Error(`could not register the webhook: ${JSON.stringify(hook.body)}`);
    secret = String(hook.body.body.secret);

    for (let round = 1; round <= rounds; round++) {
      const killAfter = 20 + Math.floor(Math.random() * 150);
      let count = 0;
      const writer = async () => {
        for (;;) {
          try {
            const res = await api(token, 'POST', `/api/tasks/${task.id}/time-logs`, { team_member_id: member.id, seconds: 60 });
            if (res.status === 201) {
              acked.add(res.body.body.id);
              if (++count === killAfter) child.kill('SIGKILL');
            }
          } catch {
            return;
          }
        }
      };
      await Promise.all([writer(), writer(), writer(), writer()]);
      await exited(child);
      console.log(`${kind} round ${round}: killed after ${killAfter} acknowledged time logs; ${receiver.ids.size} events received so far`);
      child = await start(target);
    }

    // Every acknowledged log has its event once in the feed, in growing seq order.
    const logEvents = new Map<string, string>();
    let after = 0;
    let lastSeq = 0;
    for (;;) {
      const page = (await api(token, 'GET', `/api/events?after=${after}&limit=1000&type=time_log.created`)).body.body as unknown as { events: { id: string; seq: number; data: { time_log_id: string } }[]; next_after: number };
      if (page.events.length === 0) break;
      for (const event of page.events) {
        if (event.seq <= lastSeq) problems.push(`seq ${event.seq} after ${lastSeq}`);
        lastSeq = event.seq;
        if (logEvents.has(event.data.time_log_id)) problems.push(`time log ${event.data.time_log_id} has two events`);
        logEvents.set(event.data.time_log_id, event.id);
      }
      after = page.next_after;
    }
    const withoutEvent = [...acked].filter((id) => !logEvents.has(id));
    if (withoutEvent.length) problems.push(`${withoutEvent.length} acknowledged time logs have no event`);
    // Every event is delivered: wait for it, however long the leases of killed attempts take to end.
    const expected = [...logEvents.values()];
    const deadline = Date.now() + 5 * 60_000;
    while (expected.some((id) => !receiver.ids.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const undelivered = expected.filter((id) => !receiver.ids.has(id));
    if (undelivered.length) problems.push(`${undelivered.length} of ${expected.length} events never delivered`);
    if (receiver.bad) problems.push(`${receiver.bad} deliveries did not verify`);
    const again = [...receiver.ids.values()].filter((n) => n > 1).length;
    console.log(`${kind}: ${acked.size} acknowledged logs, ${expected.length} events, all delivered: ${undelivered.length === 0}; ${again} delivered more than once (at least once)`);
    child.kill('SIGTERM');
    await exited(child);
  } finally {
    await receiver.close();
    await cleanup();
  }
  return problems.map((p) => `${kind}: ${p}`);
}

async function main() {
  execSync('npm run --silent build', { stdio: 'inherit' });
  const which = option('backend', 'both');
  const backends = which === 'both' ? (['postgres', 'pglite'] as const) : [which as 'postgres' | 'pglite'];
  const problems: string[] = [];
  for (const backend of backends) problems.push(...(await runBackend(backend)));
  console.log(problems.length ? `webhook crash recovery: FAILED\n${problems.join('\n')}` : 'webhook crash recovery: passed');
  process.exit(problems.length ? 1 : 0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
