import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { authenticate, createToken, revokeToken } from '../../../src/auth/tokens.service';
import { bootstrapAccess } from '../../../src/bootstrap';
import { createDb, Db } from '../../../src/db/knex';
import { DEFAULT_TEAM_ID, ensureDefaultTeam } from '../../../src/teams/teams.service';
import { backendFromEnv, scratchDir } from '../../support/backend';
import { Api, Harness, startHarness } from '../../support/harness';

const run = promisify(execFile);
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await ensureDefaultTeam(h.db);
});
afterAll(() => h.close());

/*
 * Everything here acts on the default team (ADMIN_TOKEN's, the operator's), which test files share:
 * kept in this one file, so no other file's tokens of that team come and go meanwhile.
 */
const secretOf = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2)}-0123456789abcdef`;
/** The default team's active tokens that ADMIN_TOKEN made. */
const activeAdminTokens = async () =>
  h.db('api_tokens').where({ team_id: DEFAULT_TEAM_ID, from_admin_token: true }).whereNull('revoked_at').select('id');

describe('bootstrap of access', () => {
  it('makes ADMIN_TOKEN an admin of the default team, and makes it one again if its role was changed', async () => {
    const secret = secretOf('operator-secret');
    await bootstrapAccess(h.db, secret);
    expect(await authenticate(h.db, secret)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'admin' });
    await h.db('api_tokens').where({ team_id: DEFAULT_TEAM_ID, name: 'ADMIN_TOKEN' }).whereNull('revoked_at').update({ role: 'viewer' });
    expect(await authenticate(h.db, secret)).toMatchObject({ role: 'viewer' });
    await bootstrapAccess(h.db, secret);
    expect(await authenticate(h.db, secret)).toMatchObject({ role: 'admin' });
  });

  it('replaces the previous ADMIN_TOKEN when started with another value, and never brings the old one back', async () => {
    const first = secretOf('first');
    const second = secretOf('second');
    await bootstrapAccess(h.db, first);
    expect(await authenticate(h.db, first)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'admin' });
    await bootstrapAccess(h.db, second);
    expect(await authenticate(h.db, second)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'admin' });
    expect(await authenticate(h.db, first)).toBeUndefined();
    expect(await activeAdminTokens()).toHaveLength(1);
    // Restarts with the current value leave the old one revoked.
    await bootstrapAccess(h.db, second);
    await bootstrapAccess(h.db, second);
    expect(await authenticate(h.db, first)).toBeUndefined();
    expect(await authenticate(h.db, second)).toMatchObject({ role: 'admin' });
    expect(await activeAdminTokens()).toHaveLength(1);
    // An instance restarted with the value rotated out: it stays revoked, and does not revoke its successor.
    expect(await bootstrapAccess(h.db, first)).toEqual({ adminTokenRevoked: true });
    expect(await authenticate(h.db, first)).toBeUndefined();
    expect(await authenticate(h.db, second)).toMatchObject({ role: 'admin' });
  });

  it('leaves a revoked ADMIN_TOKEN revoked at the next start, and says so', async () => {
    const secret = secretOf('revoked');
    await bootstrapAccess(h.db, secret);
    const { id } = await h.db('api_tokens').where({ team_id: DEFAULT_TEAM_ID, from_admin_token: true }).whereNull('revoked_at').first('id');
    await revokeToken(h.db, DEFAULT_TEAM_ID, id as string);
    expect(await bootstrapAccess(h.db, secret)).toEqual({ adminTokenRevoked: true });
    expect(await authenticate(h.db, secret)).toBeUndefined();
  });

  it('generates an admin token only while the default team has no active admin', async () => {
    await h.db('api_tokens').where({ team_id: DEFAULT_TEAM_ID, role: 'admin' }).update({ revoked_at: h.db.fn.now() });
    const first = await bootstrapAccess(h.db, undefined);
    expect(first.generatedAdminToken).toMatch(/^pft_/);
    expect(await authenticate(h.db, first.generatedAdminToken as string)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'admin' });
    expect((await bootstrapAccess(h.db, undefined)).generatedAdminToken).toBeUndefined();
  });
});

describe('creating teams: the operator only (an admin of the default team)', () => {
  const teamsNamed = async (name: string) => h.db('teams').where({ name }).select('id', 'created_by_token_id', 'created_at');

  it('refuses an admin of any other team and a viewer or editor of the default team (403), creating nothing', async () => {
    const name = `Refused team ${Date.now()}`;
    const viewer = await createToken(h.db, DEFAULT_TEAM_ID, 'default viewer', 'viewer');
    const editor = await createToken(h.db, DEFAULT_TEAM_ID, 'default editor', 'editor');
    try {
      for (const api of [h.api, h.api.as(viewer.token), h.api.as(editor.token)]) {
        const res = await api.post('/api/teams', { name }).expect(403);
        expect(res.body.error.code).toBe('FORBIDDEN');
      }
      expect(await teamsNamed(name)).toEqual([]);
    } finally {
      await revokeToken(h.db, DEFAULT_TEAM_ID, viewer.id);
      await revokeToken(h.db, DEFAULT_TEAM_ID, editor.id);
    }
  });

  it('lets an admin of the default team create one, recording which token did and when', async () => {
    const operator = await createToken(h.db, DEFAULT_TEAM_ID, 'operator', 'admin');
    try {
      const name = `Created team ${Date.now()}`;
      const [{ before }] = (await h.db.raw('select now() as before')).rows;
      const res = await new Api(h.app, operator.token).post('/api/teams', { name }).expect(201);
      const [{ after }] = (await h.db.raw('select now() as after')).rows;
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body.body).toEqual({ team: { id: expect.any(String), name }, token: expect.stringMatching(/^pft_/) });
      const [team] = await teamsNamed(name);
      expect(team).toMatchObject({ id: res.body.body.team.id, created_by_token_id: operator.id });
      expect(new Date(team.created_at).getTime()).toBeGreaterThanOrEqual(new Date(before).getTime());
      expect(new Date(team.created_at).getTime()).toBeLessThanOrEqual(new Date(after).getTime());
      // The new team's admin manages its own team, and may not create teams in turn.
      await h.api.as(res.body.body.token).get('/api/tokens').expect(200);
      await h.api.as(res.body.body.token).post('/api/teams', { name: `${name} 2` }).expect(403);
    } finally {
      await revokeToken(h.db, DEFAULT_TEAM_ID, operator.id);
    }
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
