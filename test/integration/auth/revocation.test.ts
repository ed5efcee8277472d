import { createApp } from '../../../src/app';
import { listenForRevocations, RevocationListener } from '../../../src/auth/revocation-listener';
import { createTokenCache } from '../../../src/auth/token-cache';
import { installAdminToken } from '../../../src/auth/tokens.repository';
import { hashSecret } from '../../../src/auth/tokens.service';
import { createLogger } from '../../../src/logger';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Api, Harness, startHarness } from '../../support/harness';

/*
 * Two instances on one PostgreSQL database: the harness's app (A) and a second app (B) with its own
 * token cache kept in step by a revocation listener, as server.ts sets it up. B trusts a cached token
 * for an hour, so only the notification can explain a 401 there. PGlite is opened by one
 * process only: there is no other instance to tell (reported as skipped).
 */
const backend = backendFromEnv();
const describeOnServer = describeOnPostgres('one process opens PGlite, so there is no second instance to tell');

describeOnServer('token revocation across instances', () => {
  let h: Harness;
  let listener: RevocationListener;
  let appB: ReturnType<typeof createApp>;
  let statements = 0;
  // The statements of the requests themselves: a token's last use is recorded in the background, once a minute.
  const count = (query: { sql: string }) => {
    if (!query.sql.startsWith('insert into "api_token_usage"')) statements++;
  };

  beforeAll(async () => {
    h = await startHarness();
    const cache = createTokenCache(3_600_000);
    listener = listenForRevocations((backend as { url: string }).url, cache, createLogger('silent'));
    await listener.ready;
    appB = createApp({ db: h.db, logger: createLogger('silent'), tokenCache: cache });
    h.db.on('query', count);
  });
  afterAll(async () => {
    h.db.off('query', count);
    await listener.close();
    await h.close();
  });

  async function viewerToken(name: string) {
    const created = await h.api.post('/api/tokens', { name, role: 'viewer' }).expect(201);
    return { id: created.body.body.id as string, secret: created.body.body.token as string };
  }

  async function statementsOf(action: () => Promise<unknown>) {
    statements = 0;
    await action();
    return statements;
  }

  it('stops a token on instance B as soon as instance A revokes it, though B had it cached', async () => {
    const token = await viewerToken('cached on B');
    const onB = new Api(appB, token.secret);
    expect(await statementsOf(() => onB.get('/api/job-roles').expect(200))).toBe(2); // token lookup + the list
    expect(await statementsOf(() => onB.get('/api/job-roles').expect(200))).toBe(1); // token from B's cache

    await h.api.delete(`/api/tokens/${token.id}`).expect(200);
    // The notification is delivered after A's commit, asynchronously: poll for it. B would trust the
    // token for an hour otherwise, so a 401 can only come from the notification.
    // However long that takes on a busy machine (jest's timeout is the bound).
    let status = 200;
    while (status === 200) {
      status = (await onB.get('/api/job-roles')).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 5));
    }
    expect(status).toBe(401);
  });

  it('drops B\'s cached role when a start-up with ADMIN_TOKEN makes an existing token an admin (installAdminToken)', async () => {
    const token = await viewerToken('promoted by ADMIN_TOKEN');
    const onB = new Api(appB, token.secret);
    expect((await onB.get('/api/session').expect(200)).body.body.role).toBe('viewer');
    expect((await onB.get('/api/session').expect(200)).body.body.role).toBe('viewer'); // from B's cache
    // What bootstrap.ts does when ADMIN_TOKEN holds this secret, from another instance.
    await installAdminToken(h.db, h.teamId, 'ADMIN_TOKEN', hashSecret(token.secret));
    // B trusts its cache for an hour: only the notification can make it see the new role.
    let role = 'viewer';
    while (role === 'viewer') {
      role = (await onB.get('/api/session').expect(200)).body.body.role;
      if (role === 'viewer') await new Promise((r) => setTimeout(r, 5));
    }
    expect(role).toBe('admin');
  });

  it('stops the previous ADMIN_TOKEN on B as soon as a start-up elsewhere installs another (rotation)', async () => {
    const old = `old-admin-token-${Date.now()}-0123456789abcdef`;
    await installAdminToken(h.db, h.teamId, 'ADMIN_TOKEN', hashSecret(old));
    const onB = new Api(appB, old);
    await onB.get('/api/tokens').expect(200);
    await onB.get('/api/tokens').expect(200); // from B's cache
    // What bootstrap.ts does at a start-up with a new ADMIN_TOKEN, from another instance.
    await installAdminToken(h.db, h.teamId, 'ADMIN_TOKEN', hashSecret(`new-admin-token-${Date.now()}-0123456789abcdef`));
    // B trusts its cache for an hour: only the notification can explain a 401.
    let status = 200;
    while (status === 200) {
      status = (await onB.get('/api/tokens')).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 5));
    }
    expect(status).toBe(401);
  });

  it('does not serve from the cache while the listener is down', async () => {
    const token = await viewerToken('listener down');
    const onB = new Api(appB, token.secret);
    await onB.get('/api/job-roles').expect(200);
    await listener.close();
    expect(await statementsOf(() => onB.get('/api/job-roles').expect(200))).toBe(2);
    // Revoked behind every instance's back (no notification): B still refuses it at once.
    await h.db('api_tokens').where({ id: token.id }).update({ revoked_at: h.db.fn.now() });
    await onB.get('/api/job-roles').expect(401);
  });
});
