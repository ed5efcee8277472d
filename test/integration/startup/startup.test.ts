import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { backendFromEnv, itOnPostgres, scratchDir } from '../../support/backend';
import { itIf } from '../../support/skip';
import { Finished, RunningService, kill, runToExit, startService, tokenCli } from '../../support/processes';

/*
 * Start-up as a user meets it (docs/operations.md, Start-up): each test runs the real service or its tools as
 * processes. Generous time limits: a first start creates a database, which is slow on a busy machine.
 */
jest.setTimeout(10 * 60_000);

const scratch = scratchDir('pfs-startup-');
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
let dirs = 0;
const newDataDir = () => path.join(scratch, `data-${(dirs += 1)}`);

/** A port nothing listens on: bound once by this process, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function expectOneLineFailure(run: Finished, pattern: RegExp): void {
  const lines = run.stderr.split('\n').filter((line) => line.trim() !== '');
  expect({ code: run.code, lines }).toEqual({ code: 1, lines: [expect.stringMatching(pattern)] });
  // No stack frames and no JSON warnings from the database driver, on either stream.
  expect(run.stderr + run.stdout).not.toMatch(/\n\s+at /);
  expect(run.stdout).not.toMatch(/"level":[4-6]0/);
}

const serve = (env: Record<string, string>) => runToExit('src/server.ts', [], env);

describe('a start-up that cannot succeed says why in one line and exits non-zero', () => {
  it('names a bad DATABASE_URL without echoing it', async () => {
    const run = await serve({ DATABASE_URL: 'base' });
    expectOneLineFailure(run, /^Start-up failed: Invalid configuration: DATABASE_URL: must be a URL like postgres:\/\//);
  });

  it('refuses an ADMIN_TOKEN under 32 characters without echoing it', async () => {
    const run = await serve({ ADMIN_TOKEN: 'too-short-0123456789' });
    expectOneLineFailure(run, /^Start-up failed: Invalid configuration: ADMIN_TOKEN: must be at least 32 characters/);
    expect(run.stderr + run.stdout).not.toContain('too-short-0123456789');
  });

  it('names a closed port of the database server', async () => {
    const port = await closedPort();
    const run = await serve({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` });
    expectOneLineFailure(run, new RegExp(`^Start-up failed: Cannot use PostgreSQL 127\\.0\\.0\\.1:${port}/postgres: nothing accepts connections`));
  });

  const backend = backendFromEnv();
  const onServer = itOnPostgres('it has no server with databases and roles to name');
  onServer('names a database or a role that the server does not have', async () => {
    const wrongDb = new URL(backend.kind === 'postgres' ? backend.url : 'postgres://x');
    wrongDb.pathname = '/pfs_no_such_database';
    const wrongRole = new URL(wrongDb);
    wrongRole.pathname = '/postgres';
    wrongRole.username = 'pfs_no_such_role';
    const [db, role] = await Promise.all([serve({ DATABASE_URL: wrongDb.href }), serve({ DATABASE_URL: wrongRole.href })]);
    expectOneLineFailure(db, /pfs_no_such_database\b.*does not exist/);
    expectOneLineFailure(role, /role "pfs_no_such_role" does not exist/);
  });

  it('names a DATA_DIR that cannot be created, is not a directory, or is not writable', async () => {
    const file = path.join(scratch, 'a-file');
    fs.writeFileSync(file, 'not a directory');
    const runs = await Promise.all([
      serve({ DATA_DIR: '/proc/pfs-no-such-dir/data' }),
      serve({ DATA_DIR: file }),
      serve({ DATA_DIR: '/proc' }),
    ]);
    expectOneLineFailure(runs[0] as Finished, /^Start-up failed: DATA_DIR \/proc\/pfs-no-such-dir\/data cannot be created: no such file or directory$/);
    expectOneLineFailure(runs[1] as Finished, new RegExp(`^Start-up failed: DATA_DIR ${file} (is not a directory|cannot be created: exists and is not a directory)$`));
    expectOneLineFailure(runs[2] as Finished, /^Start-up failed: DATA_DIR \/proc is not writable/);
  });

  const unprivileged = itIf(process.getuid?.() !== 0, 'skipped as root, who may write to any directory');
  unprivileged('names a DATA_DIR without write permission', async () => {
    const dir = path.join(scratch, 'read-only');
    fs.mkdirSync(dir, { mode: 0o555 });
    expectOneLineFailure(await serve({ DATA_DIR: dir }), /is not writable: permission denied$/);
  });
});

describe('one process owns an embedded data directory', () => {
  let owner: RunningService | undefined;
  afterEach(async () => {
    if (owner) await kill(owner);
    owner = undefined;
  });

  it('refuses a second service and the command-line tools while the owner runs, and a killed owner is taken over with nothing lost', async () => {
    const dataDir = newDataDir();
    owner = await startService({ DATA_DIR: dataDir, ADMIN_TOKEN: 'admin-secret-0123456789abcdefghijklmnop' });
    const pid = owner.child.pid as number;
    const created = await fetch(`${owner.baseUrl}/api/projects`, {
      method: 'POST',
      headers: { Authorization: 'Bearer admin-secret-0123456789abcdefghijklmnop', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Kept', currency: 'EUR' }),
    });
    expect(created.status).toBe(201);
    const project = ((await created.json()) as { body: { id: string } }).body;

    // The same directory through another spelling (a symlink) is the same directory.
    const alias = `${dataDir}-alias`;
    fs.symlinkSync(dataDir, alias);
    const inUse = new RegExp(`DATA_DIR \\S+ is in use by process ${pid}\\b`);
    const [second, token, migrate] = await Promise.all([
      serve({ DATA_DIR: alias }),
      tokenCli(['create', '--role', 'viewer', '--name', 'lost'], { DATA_DIR: dataDir }),
      runToExit('src/db/migrate-cli.ts', [], { DATA_DIR: dataDir }),
    ]);
    expectOneLineFailure(second, inUse);
    expectOneLineFailure(token, inUse);
    expectOneLineFailure(migrate, inUse);

    await kill(owner);
    owner = undefined;
    // Nothing to clean up after a SIGKILL: the next process takes the directory over.
    const viewer = await tokenCli(['create', '--role', 'viewer', '--name', 'after the crash'], { DATA_DIR: dataDir });
    expect(viewer.code).toBe(0);
    const secret = viewer.stdout.trim().split('\n').pop() as string;

    owner = await startService({ DATA_DIR: dataDir });
    const projects = await fetch(`${owner.baseUrl}/api/projects`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(projects.status).toBe(200);
    const ids = ((await projects.json()) as { body: { id: string }[] }).body.map((p) => p.id);
    expect(ids).toContain(project.id);
  });
});

describe('a first start that fails', () => {
  it('at listen (port taken, after migrations and demo data) leaves no token behind, and the next start prints one that works', async () => {
    const dataDir = newDataDir();
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const failed = await serve({ DATA_DIR: dataDir, PORT: String(port), SEED_DEMO: 'true' });
      expect(failed.code).toBe(1);
      expect(failed.stderr.trim()).toBe(`Start-up failed: Port ${port} on 127.0.0.1 is already in use: stop what uses it or set PORT`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    const tokens = await tokenCli(['list'], { DATA_DIR: dataDir });
    expect({ code: tokens.code, tokens: tokens.stdout.trim() }).toEqual({ code: 0, tokens: '' });

    const service = await startService({ DATA_DIR: dataDir, SEED_DEMO: 'true' });
    try {
      const token = /export TOKEN=(pft_\S+)/.exec(service.output())?.[1];
      expect(token).toBeDefined();
      const res = await fetch(`${service.baseUrl}/api/projects`, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      const names = ((await res.json()) as { body: { name: string }[] }).body.map((p) => p.name);
      expect(names.length).toBe(1); // the demo project seeded by the failed start, not seeded twice
    } finally {
      await kill(service);
    }
  });
});
