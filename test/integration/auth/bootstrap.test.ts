import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { authenticate } from '../../../src/auth/tokens.service';
import { bootstrapAccess } from '../../../src/bootstrap';
import { createDb, Db } from '../../../src/db/knex';
import { DEFAULT_TEAM_ID } from '../../../src/teams/teams.service';
import { backendFromEnv, scratchDir } from '../../support/backend';
import { Harness, startHarness } from '../../support/harness';

const run = promisify(execFile);
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('bootstrap of access', () => {
  it('makes ADMIN_TOKEN an admin of the default team, and reinstates it if it was revoked', async () => {
    const secret = `operator-secret-${Date.now()}-abcdef`;
    await bootstrapAccess(h.db, secret);
    expect(await authenticate(h.db, secret)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'admin' });
    await h.db('api_tokens').where({ team_id: DEFAULT_TEAM_ID, name: 'ADMIN_TOKEN' }).update({ revoked_at: h.db.fn.now(), role: 'viewer' });
    expect(await authenticate(h.db, secret)).toBeUndefined();
    await bootstrapAccess(h.db, secret);
    expect(await authenticate(h.db, secret)).toMatchObject({ role: 'admin' });
  });

  it('generates an admin token only while the default team has no active admin', async () => {
    await h.db('api_tokens').where({ team_id: DEFAULT_TEAM_ID, role: 'admin' }).update({ revoked_at: h.db.fn.now() });
    const first = await bootstrapAccess(h.db, undefined);
    expect(first.generatedAdminToken).toMatch(/^pft_/);
    expect(await authenticate(h.db, first.generatedAdminToken as string)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'admin' });
    expect((await bootstrapAccess(h.db, undefined)).generatedAdminToken).toBeUndefined();
  });
});

describe('npm run token (command line)', () => {
  it('creates a token that authenticates, lists it, and revokes it', async () => {
    const backend = backendFromEnv();
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', NODE_OPTIONS: '' };
    let db: Db;
    let root: string | undefined;
    if (backend.kind === 'postgres') {
      env.DATABASE_URL = backend.url;
      db = h.db;
    } else {
      root = scratchDir('pfs-cli-');
      const dataDir = path.join(root, 'data');
      fs.cpSync(backend.templateDir, dataDir, { recursive: true });
      env.DATA_DIR = dataDir;
      delete env.DATABASE_URL;
      db = h.db; // replaced below: the CLI's PGlite directory can only be opened once it has exited
    }
    const cli = (...args: string[]) => run(path.resolve('node_modules/.bin/tsx'), ['src/auth/token-cli.ts', ...args], { env });
    try {
      const created = await cli('create', '--role', 'viewer', '--name', 'ci');
      const secret = created.stdout.trim().split('\n').pop() as string;
      const id = /id ([0-9a-f-]{36})/.exec(created.stdout)?.[1] as string;
      expect(secret).toMatch(/^pft_/);
      if (root) db = createDb({ kind: 'pglite', dataDir: env.DATA_DIR as string });
      expect(await authenticate(db, secret)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'viewer', tokenName: 'ci' });
      if (root) await db.destroy();
      expect((await cli('list')).stdout).toMatch(new RegExp(`${id}\\s+viewer\\s+active\\s+ci`));
      expect((await cli('revoke', id)).stdout).toContain(id);
      expect((await cli('list')).stdout).toMatch(new RegExp(`${id}\\s+viewer\\s+revoked`));
      await expect(cli('create', '--role', 'owner', '--name', 'x')).rejects.toMatchObject({ code: 2 });
    } finally {
      if (root) fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
