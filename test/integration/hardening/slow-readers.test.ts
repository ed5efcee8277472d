import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { AppDeps, createApp } from '../../../src/app';
import { createDb, Db } from '../../../src/db/knex';
import { serverFor } from '../../../src/http/express-server';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { backendFromEnv, scratchDir } from '../../support/backend';

/*
 * Slow readers hold nothing shared (docs/api.md, "Slow readers and busy teams"). The attack: a viewer of team B opens exports
 * of a big project and reads nothing. Team A's export and list must still be answered, B's stalled
 * connections are cut once they have taken nothing for the configured time, which ends their exports
 * and frees B's turns, and past B's own queue B is refused with 429 and Retry-After.
 *
 * The server listens on a Unix socket: there the system buffers about 200 KB between the service and
 * a client that reads nothing (over loopback TCP it is several megabytes), so a 400 KB export stalls.
 * Each test first waits until B's exports are seen stalled on the server (their answer waiting for
 * the client to drain it), so nothing depends on how fast the machine is.
 */
const backend = backendFromEnv();

async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  // Polls an observable condition; the bound only turns a hang into a failure.
  const deadline = Date.now() + 120_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

type Answer = { status: number; headers: http.IncomingHttpHeaders; text: string };

/** A running service on a Unix socket, with every response it handles by its X-Request-Id. */
class Service {
  readonly responses = new Map<string, http.ServerResponse>();
  private constructor(
    readonly server: http.Server,
    readonly socketPath: string,
  ) {
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const id = req.headers['x-request-id'];
      if (typeof id === 'string') this.responses.set(id, res);
    });
  }

  static async start(app: Express, dir: string, name: string): Promise<Service> {
    const server = serverFor(app);
    const socketPath = path.join(dir, `${name}.sock`);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    return new Service(server, socketPath);
  }

  /** A GET whose answer is read in full. */
  get(url: string, token: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.get({ socketPath: this.socketPath, path: url, agent: false, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  }

  /** A GET from a client that never reads its answer (its socket paused from the start). */
  stalledGet(url: string, token: string, id: string): Promise<net.Socket> {
    return new Promise((resolve) => {
      const socket = net.connect(this.socketPath, () => {
        socket.pause();
        socket.write(`GET ${url} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nX-Request-Id: ${id}\r\n\r\n`);
        resolve(socket);
      });
      socket.on('error', () => undefined);
    });
  }

  /** The server's answer to request `id` is under way and waits for its client to take what was sent. */
  stalled(id: string): boolean {
    const res = this.responses.get(id);
    return res !== undefined && res.headersSent && res.writableNeedDrain && !res.destroyed;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const LONG = (prefix: string) => `${prefix} ${'x'.repeat(480)}`;
const LABEL = (prefix: string) => `${prefix} ${'y'.repeat(90)}`;
const SUBTASKS = 300;

describe('slow readers hold nothing shared', () => {
  let db: Db;
  let root: string;
  let teamA: { token: string };
  let teamB: { token: string };
  let bigProject: string;
  let bigParent: string;
  let smallProject: string;
  const deps = (more: Partial<AppDeps>): AppDeps => ({ db, logger: createLogger('silent'), ...more });

  beforeAll(async () => {
    root = scratchDir('pfs-slow-readers-');
    if (backend.kind === 'postgres') db = createDb({ kind: 'postgres', url: backend.url });
    else {
      const dataDir = path.join(root, 'data');
      fs.cpSync(backend.templateDir, dataDir, { recursive: true });
      db = createDb({ kind: 'pglite', dataDir });
    }
    teamA = await createTeamWithAdmin(db, 'slow readers A');
    teamB = await createTeamWithAdmin(db, 'slow readers B');
    const setup = createApp(deps({}));
    const as = (token: string) => ({ Authorization: `Bearer ${token}` });

    // Team B: a parent and 300 subtasks with long names and labels, about 1.4 KB a row of CSV.
    bigProject = (await request(setup).post('/api/projects').set(as(teamB.token)).send({ name: 'Big' }).expect(201)).body.body.id;
    const labels = { status: LABEL('status'), priority: LABEL('priority'), phase: LABEL('phase') };
    bigParent = (await request(setup).post(`/api/projects/${bigProject}/tasks`).set(as(teamB.token)).send({ name: LONG('Parent'), ...labels }).expect(201))
      .body.body.id;
    for (let start = 0; start < SUBTASKS; start += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, SUBTASKS - start) }, (_, i) =>
          request(setup)
            .post(`/api/projects/${bigProject}/tasks`)
            .set(as(teamB.token))
            .send({ name: LONG(`Sub ${start + i}`), parent_task_id: bigParent, estimated_hours: 1, fixed_cost: 1, ...labels })
            .expect(201),
        ),
      );
    }

    // Team A: two tasks whose fixed costs add up to 120.75.
    smallProject = (await request(setup).post('/api/projects').set(as(teamA.token)).send({ name: 'Small', currency: 'EUR' }).expect(201)).body.body.id;
    await request(setup).post(`/api/projects/${smallProject}/tasks`).set(as(teamA.token)).send({ name: 'Alpha', fixed_cost: 100.5 }).expect(201);
    await request(setup).post(`/api/projects/${smallProject}/tasks`).set(as(teamA.token)).send({ name: 'Beta', fixed_cost: 20.25 }).expect(201);
  });
  afterAll(async () => {
    await db.destroy();
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** The CSV's totals row: fixed cost and total estimated cost are its 13th and 14th fields. */
  const totalsOf = (csv: string) => csv.trimEnd().split('\r\n').at(-1)!.split(',');

  it("answers team A's export and lists while team B's exports of a big project are stalled", async () => {
    // As many of B's exports as the instance renders at once: before the fix each held a render slot
    // while it waited for its reader, and everything else, A's export and list included, waited behind.
    const service = await Service.start(createApp(deps({ listRenders: 2, teamRenders: { perTeam: 2, queuePerTeam: 5 }, clientStallMs: 0 })), root, 'isolation');
    const exportOf = (project: string) => `/api/project-finance/project/${project}/export?format=csv`;
    const attackers = [await service.stalledGet(exportOf(bigProject), teamB.token, 'b1'), await service.stalledGet(exportOf(bigProject), teamB.token, 'b2')];
    try {
      await until("B's exports to stall", () => service.stalled('b1') && service.stalled('b2'));

      const file = await service.get(exportOf(smallProject), teamA.token);
      expect(file.status).toBe(200);
      const lines = file.text.trimEnd().split('\r\n');
      expect(lines.map((line) => line.split(',')[0])).toEqual(['Task', 'Alpha', 'Beta', 'Total']);
      expect(totalsOf(file.text).slice(12, 14)).toEqual(['120.75', '120.75']);

      const list = await service.get(`/api/project-finance/project/${smallProject}/tasks`, teamA.token);
      expect(list.status).toBe(200);
      expect(JSON.parse(list.text).body.totals).toMatchObject({ fixed_cost: 120.75, total_estimated_cost: 120.75 });
      // A ranged list is never in the cache: it is rendered, and is answered too.
      const ranged = await service.get(`/api/project-finance/project/${smallProject}/tasks?from=2026-01-01&to=2026-01-31`, teamA.token);
      expect(ranged.status).toBe(200);
      expect(JSON.parse(ranged.text).body.totals).toMatchObject({ fixed_cost: 120.75, logged_hours: 0 });

      // All of that while B's exports were (and still are) stalled.
      expect([service.stalled('b1'), service.stalled('b2')]).toEqual([true, true]);
    } finally {
      attackers.forEach((socket) => socket.destroy());
      await service.close();
    }
  }, 300_000);

  it('cuts clients that take nothing for the configured time, which ends their exports and frees their team’s turns', async () => {
    // Five stalled exports, as many as a team runs at once by default: B's sixth waits until they are cut.
    const service = await Service.start(createApp(deps({ clientStallMs: 1_500 })), root, 'cut');
    const url = `/api/project-finance/project/${bigProject}/export?format=csv`;
    const ids = ['s1', 's2', 's3', 's4', 's5'];
    const attackers = await Promise.all(ids.map((id) => service.stalledGet(url, teamB.token, id)));
    try {
      await until("B's exports to stall", () => ids.every((id) => service.stalled(id)));
      const cut = Promise.all(ids.map((id) => new Promise<void>((resolve) => service.responses.get(id)!.socket!.once('close', () => resolve()))));
      const next = service.get(url, teamB.token);

      await cut;
      // Each export stopped where it was: its reader, reading now, gets only part of the file.
      const received = await Promise.all(
        attackers.map((attacker) => {
          const chunks: Buffer[] = [];
          attacker.on('data', (chunk: Buffer) => chunks.push(chunk));
          const ended = new Promise<string>((resolve) => attacker.once('close', () => resolve(Buffer.concat(chunks).toString('utf8'))));
          attacker.resume();
          return ended;
        }),
      );

      // The waiting export got B's turn and the whole file: its last row is the totals row.
      const whole = await next;
      expect(whole.status).toBe(200);
      expect(totalsOf(whole.text)[0]).toBe('Total');
      expect(totalsOf(whole.text)[12]).toBe(String(SUBTASKS));
      for (const partial of received) {
        expect(partial.length).toBeLessThan(whole.text.length);
        expect(partial).not.toContain('\r\nTotal,');
      }
    } finally {
      attackers.forEach((attacker) => attacker.destroy());
      await service.close();
    }
  }, 300_000);

  it("refuses a team's list or breakdown with 429 and Retry-After past its queue; other teams and plain breakdowns are answered", async () => {
    // Two of B's turns held by stalled exports, one place to wait: of a ranged list and a subtree
    // breakdown sent together, one waits and the other is refused.
    const service = await Service.start(createApp(deps({ teamRenders: { perTeam: 2, queuePerTeam: 1 }, clientStallMs: 0 })), root, 'queue');
    const url = `/api/project-finance/project/${bigProject}/export?format=csv`;
    const attackers = [await service.stalledGet(url, teamB.token, 'q1'), await service.stalledGet(url, teamB.token, 'q2')];
    try {
      await until("B's exports to stall", () => service.stalled('q1') && service.stalled('q2'));
      const answered: Answer[] = [];
      const both = [
        service.get(`/api/project-finance/project/${bigProject}/tasks?to=2026-12-31`, teamB.token),
        service.get(`/api/project-finance/task/${bigParent}/breakdown?include_subtasks=true`, teamB.token),
      ].map((answer) => answer.then((got) => (answered.push(got), got)));
      await until('one of them to be answered', () => answered.length > 0);
      const [refused] = answered;
      expect(refused!.status).toBe(429);
      expect(refused!.headers['retry-after']).toBe('1');
      expect(JSON.parse(refused!.text)).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });

      // Still full: a ranged breakdown is refused as well; a breakdown of one task's stored figures is not held up.
      const ranged = await service.get(`/api/project-finance/task/${bigParent}/breakdown?from=2026-01-01`, teamB.token);
      expect(ranged.status).toBe(429);
      expect(ranged.headers['retry-after']).toBe('1');
      const plain = await service.get(`/api/project-finance/task/${bigParent}/breakdown`, teamB.token);
      expect(plain.status).toBe(200);
      // Team A has its own queue.
      const listA = await service.get(`/api/project-finance/project/${smallProject}/tasks?to=2026-12-31`, teamA.token);
      expect(listA.status).toBe(200);
      expect(answered).toHaveLength(1);

      // B's readers go away: the one that waited gets its turn and its answer.
      attackers.forEach((socket) => socket.destroy());
      const [first, second] = await Promise.all(both);
      expect([first!.status, second!.status].sort()).toEqual([200, 429]);
    } finally {
      attackers.forEach((socket) => socket.destroy());
      await service.close();
    }
  }, 300_000);
});
