import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createDb } from '../../../src/db/knex';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { backendFromEnv, scratchDir } from '../../support/backend';

/*
 * SIGTERM: the server stops accepting connections, finishes the request in flight, closes the
 * database and exits 0. The request in flight is one whose body is only half sent when the signal
 * arrives, so it is certainly still being served.
 */
let token: string;
let root: string | undefined;
let child: ChildProcess;
let port = 0;
let output = '';

beforeAll(async () => {
  const backend = backendFromEnv();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'false', LOG_LEVEL: 'info', NODE_OPTIONS: '' };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.ADMIN_TOKEN;
  if (backend.kind === 'postgres') env.DATABASE_URL = backend.url;
  else {
    root = scratchDir('pfs-shutdown-');
    env.DATA_DIR = path.join(root, 'data');
    fs.cpSync(backend.templateDir, env.DATA_DIR, { recursive: true });
  }
  // A team of its own, made before the server opens the database (PGlite admits one process).
  const db = createDb(backend.kind === 'postgres' ? { kind: 'postgres', url: backend.url } : { kind: 'pglite', dataDir: env.DATA_DIR });
  token = (await createTeamWithAdmin(db, 'shutdown team')).token;
  await db.destroy();
  child = spawn(path.resolve('node_modules/.bin/tsx'), ['src/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // However long start-up takes on a busy machine (jest's timeout is the bound): until it listens or exits.
  port = await new Promise<number>((resolve, reject) => {
    const seen = () => {
      const found = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1] ?? 0);
      if (found) resolve(found);
    };
    child.stdout?.on('data', (chunk) => ((output += String(chunk)), seen()));
    child.stderr?.on('data', (chunk) => ((output += String(chunk)), seen()));
    child.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${output}`)));
  });
});

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

it('finishes the request in flight on SIGTERM, then refuses connections and exits 0', async () => {
  const body = JSON.stringify({ name: `Shutdown role ${Date.now()}` });
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let response = '';
  socket.on('data', (chunk) => (response += String(chunk)));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.write(
    `POST /api/job-roles HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  // Time for the server to read the request's head (it is idle; this is not a measure of speed). The one
  // fixed wait of the suite: no observable condition says the server counts the connection as in flight.
  // `Expect: 100-continue` was tried: the 100 Continue comes once the head is parsed, yet a SIGTERM right
  // after it had the connection closed as idle in about half the runs.
  await new Promise((r) => setTimeout(r, 2_000));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  // New connections are refused while the request in flight is still open: tried until the signal has
  // been handled (a connection accepted before that is idle and closed by the server).
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = net.connect(port, '127.0.0.1');
      probe.once('connect', () => (probe.destroy(), resolve(false)));
      probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  // The rest of the body, as a client would send it (without half-closing; the server closes).
  socket.write(body.slice(5));
  await closed;
  expect(response).toMatch(/^HTTP\/1\.1 201 Created/);
  expect(response).toContain('"success":true');
  expect(await exited).toBe(0);
  expect(output).toContain('stopped');
});
