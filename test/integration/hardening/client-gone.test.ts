import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createApp } from '../../../src/app';
import { batchedReads } from '../../../src/db/batched-reads';
import { bringCurrent } from '../../../src/finance/read-model/freshness';
import { nowIso } from '../../../src/clock';
import { cancelQueriesWhenClientLeaves, outsideRequests } from '../../../src/db/request-queries';
import { createDb, Db } from '../../../src/db/knex';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Api } from '../../support/harness';

/*
 * A request whose client goes away while its statement waits or runs has that statement cancelled on
 * the server; its transaction rolls back. Without it, a write waiting for a busy project (with no lock
 * timeout) would wait for as long as the other transaction holds the project: minutes.
 * PostgreSQL server only (PGlite runs in-process, one statement at a time).
 */
const backend = backendFromEnv();
const describeOnServer = describeOnPostgres('in-process, one statement at a time, so there is no server-side statement to cancel');
const APP_NAME = 'pfs-client-gone-test';

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  // Polls without a fixed expectation of speed; the bound only turns a hang into a failure.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describeOnServer('a client that goes away (PostgreSQL)', () => {
  let db: Db;
  let api: Api;
  let server: http.Server;
  let holder: Db;
  let teamId: string;
  beforeAll(async () => {
    const url = new URL(backend.kind === 'postgres' ? backend.url : 'postgres://x@h/d');
    url.searchParams.set('application_name', APP_NAME);
    // No lock timeout: only the cancellation can end the wait.
    db = createDb({ kind: 'postgres', url: url.toString(), lockTimeoutMs: 0, statementTimeoutMs: 0 }, createLogger('silent'));
    holder = createDb({ kind: 'postgres', url: backend.kind === 'postgres' ? backend.url : '' });
    const { token, team } = await createTeamWithAdmin(db, 'client gone team');
    teamId = team.id;
    const app = createApp({ db, logger: createLogger('silent') });
    api = new Api(app, token);
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await holder.destroy();
    await db.destroy();
  });

  it('cancels the write it was waiting on and writes nothing', async () => {
    const project = (await api.post('/api/projects', { name: 'Busy', currency: 'EUR' }).expect(201)).body.body;
    const task = (await api.post(`/api/projects/${project.id}/tasks`, { name: 'Before', estimated_hours: 1 }).expect(201)).body.body;

    const waiting = async () => {
      const { rows } = await holder.raw(
        `select pid from pg_stat_activity
          where application_name = ? and datname = current_database() and wait_event_type = 'Lock'`,
        [APP_NAME],
      );
      return rows as { pid: number }[];
    };

    const trx = await holder.transaction();
    try {
      await trx.raw('select 1 from projects where id = ? for update', [project.id]);
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify({ name: 'After' });
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'PATCH',
        path: `/api/tasks/${task.id}`,
        headers: { Authorization: `Bearer ${api.token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      });
      req.on('error', () => undefined);
      req.end(body);

      await until('the PATCH to wait for the project lock', async () => ((await waiting()).length > 0 ? true : undefined));
      req.destroy();
      await until('the waiting statement to be cancelled', async () => ((await waiting()).length === 0 ? true : undefined));
    } finally {
      await trx.rollback();
    }

    const after = (await api.get(`/api/tasks/${task.id}`).expect(200)).body.body;
    expect(after.name).toBe('Before');
  });

  it('does not cancel a batched read, which other requests share, when one of its clients leaves; that request stops after it', async () => {
    // A batch's statement answers every request that asked in its turn (src/db/batched-reads.ts): here
    // one that waits for a lock the test holds, asked for by a request whose client leaves while it
    // waits and, in the same turn, by a neighbour (outside any request). It must run to its end for the
    // neighbour; the request whose client left stops when its answer comes, as a cancelled statement
    // would have stopped it. The statement waits until the test lets it go, however slow the machine.
    const lockKey = Math.floor(Math.random() * 2 ** 31);
    const slowReads = batchedReads<number, string>(
      async (reader, keys) => {
        await reader.raw('select pg_advisory_xact_lock(?)', [lockKey]);
        return keys.map(() => 'read');
      },
      { identify: String },
    );
    const outcomes: string[] = [];
    const outcome = (read: Promise<string | undefined>) => read.then((answer) => answer ?? 'nothing', (err: { code?: string }) => `failed ${err.code}`);
    const app = express();
    app.use(cancelQueriesWhenClientLeaves(db));
    app.get('/slow', async (_req, res) => {
      const mine = outcome(slowReads(db, 1));
      const neighbours = outsideRequests(() => outcome(slowReads(db, 2)));
      outcomes.push(...(await Promise.all([mine, neighbours])));
      res.end();
    });
    const slowServer = http.createServer(app);
    await new Promise<void>((resolve) => slowServer.listen(0, '127.0.0.1', resolve));
    const serverSockets: import('node:net').Socket[] = [];
    slowServer.on('connection', (socket) => serverSockets.push(socket));
    const lock = await holder.transaction();
    try {
      await lock.raw('select pg_advisory_xact_lock(?)', [lockKey]);
      const { port } = slowServer.address() as AddressInfo;
      const req = http.get({ host: '127.0.0.1', port, path: '/slow' });
      req.on('error', () => undefined);
      await until('the batched statement to wait for the lock', async () => {
        const { rows } = await holder.raw(
          `select 1 from pg_stat_activity where application_name = ? and wait_event_type = 'Lock' and query like 'select pg_advisory_xact_lock%'`,
          [APP_NAME],
        );
        return rows.length > 0 ? true : undefined;
      });
      const closed = new Promise((resolve) => serverSockets[0]!.once('close', resolve));
      req.destroy();
      await closed;
      await lock.rollback();
      await until('the batched read to end', async () => (outcomes.length > 0 ? true : undefined));
      expect(outcomes).toEqual(['failed 57014', 'read']);
    } finally {
      if (!lock.isCompleted()) await lock.rollback();
      await new Promise((resolve) => slowServer.close(resolve));
    }
  });

  it("does not cancel a project's refresh, which other requests wait for, when the client of the request that started it leaves", async () => {
    // A list of a project whose figures are out of date starts its refresh (src/finance/read-model/freshness.ts);
    // other requests for that project wait for the same refresh. Here the refresh waits for the
    // project's refresh lock, held by the test, while a second waiter joins it; then the first
    // request's client leaves. The refresh must not be cancelled: the second waiter gets it.
    const project = (await api.post('/api/projects', { name: 'Shared refresh', currency: 'EUR' }).expect(201)).body.body;
    await api.post(`/api/projects/${project.id}/tasks`, { name: 'Marked', estimated_hours: 2 }).expect(201);
    const waitingForLock = async () => {
      const { rows } = await holder.raw(
        `select 1 from pg_stat_activity where application_name = ? and datname = current_database() and wait_event_type = 'Lock'`,
        [APP_NAME],
      );
      return rows.length > 0;
    };
    const trx = await holder.transaction();
    let shared: Promise<string> | undefined;
    try {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?), hashtext(?))', [teamId, project.id]);
      const { port } = server.address() as AddressInfo;
      const serverSockets: import('node:net').Socket[] = [];
      const onConnection = (socket: import('node:net').Socket) => serverSockets.push(socket);
      server.on('connection', onConnection);
      const req = http.get({ host: '127.0.0.1', port, path: `/api/project-finance/project/${project.id}/tasks`, headers: { Authorization: `Bearer ${api.token}` } });
      req.on('error', () => undefined);
      await until('the list to start the refresh, waiting for its lock', async () => ((await waitingForLock()) ? true : undefined));
      server.off('connection', onConnection);
      // A second waiter, outside any request: it joins the refresh in flight.
      shared = bringCurrent(db, teamId, project.id, nowIso()).then(
        () => 'refreshed',
        (err: { code?: string }) => `failed ${err.code}`,
      );
      const closed = new Promise((resolve) => serverSockets[0]!.once('close', resolve));
      req.destroy();
      await closed;
      // The client is gone and the server has seen it. Were the refresh cancelled, it would stop
      // waiting for the lock now; it must still be waiting.
      const stillWaiting = await Promise.all(
        Array.from({ length: 5 }, async (_, i) => {
          await new Promise((resolve) => setTimeout(resolve, 100 * i));
          return waitingForLock();
        }),
      );
      expect(stillWaiting).toEqual([true, true, true, true, true]);
    } finally {
      await trx.rollback();
    }
    expect(await shared).toBe('refreshed');
    await api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  });
});
