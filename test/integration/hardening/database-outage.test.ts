import net from 'node:net';
import { createApp } from '../../../src/app';
import { listenForRevocations } from '../../../src/auth/revocation-listener';
import { createTokenCache } from '../../../src/auth/token-cache';
import { hashSecret } from '../../../src/auth/tokens.service';
import { createDb, Db } from '../../../src/db/knex';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Api } from '../../support/harness';

/*
 * PostgreSQL becomes unreachable and comes back: requests answer 503 meanwhile (never hang, never 500)
 * and succeed again afterwards. The outage is a TCP proxy between the service and the server that
 * stops listening and cuts every connection. PGlite is in-process and cannot be cut off this way.
 */
const backend = backendFromEnv();
const describeOnServer = describeOnPostgres('in-process, so there is no connection to cut');

class Proxy {
  private server: net.Server | undefined;
  private sockets = new Set<net.Socket>();
  private pairs: [net.Socket, net.Socket][] = [];
  private frozen = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      this.pairs.push([client, upstream]);
      if (this.frozen) {
        client.pause();
        upstream.pause();
      } else client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  /** Connections stay open but nothing is answered: a server that hangs. */
  freeze(): void {
    this.frozen = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  thaw(): void {
    if (!this.frozen) return;
    this.frozen = false;
    for (const [client, upstream] of this.pairs) {
      client.pipe(upstream).pipe(client);
      client.resume();
      upstream.resume();
    }
  }

  async stop(): Promise<void> {
    this.pairs = [];
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describeOnServer('database outage (PostgreSQL)', () => {
  let db: Db;
  let proxy: Proxy;
  let token: string;
  let app: ReturnType<typeof createApp>;
  /** The database's URL through the proxy. */
  const proxyUrl = () => {
    const url = new URL(backend.kind === 'postgres' ? backend.url : '');
    url.host = `127.0.0.1:${proxy.port}`;
    return url.toString();
  };

  beforeAll(async () => {
    const url = new URL(backend.kind === 'postgres' ? backend.url : '');
    proxy = new Proxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.start();
    db = createDb({ kind: 'postgres', url: proxyUrl() }, createLogger('silent'));
    app = createApp({ db, logger: createLogger('silent') });
    token = (await createTeamWithAdmin(db, 'outage team')).token;
  });
  afterAll(async () => {
    await proxy.stop();
    await db.destroy();
  });

  it('answers 503 while the database is unreachable and recovers when it is back', async () => {
    const api = new Api(app, token);
    const get = () => api.get('/api/job-roles');
    await get().expect(200);
    await api.as(undefined).get('/readyz').expect(200);

    const project = (await api.post('/api/projects', { name: 'Outage', currency: 'EUR' }).expect(201)).body.body;
    const task = (await api.post(`/api/projects/${project.id}/tasks`, { name: 'T', estimated_hours: 1 }).expect(201)).body.body;
    const member = (await api.post('/api/team-members', { name: 'Logger' }).expect(201)).body.body;
    const breakdown = () => api.get(`/api/project-finance/task/${task.id}/breakdown`);
    const log = () => api.post(`/api/tasks/${task.id}/time-logs`, { team_member_id: member.id, seconds: 60 });
    await breakdown().expect(200);

    await proxy.stop();
    const down = await get();
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String) } });
    // The prepared statements of the hottest reads and writes fail the same way.
    for (const res of [await breakdown(), await log()]) {
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    }
    await api.as(undefined).get('/readyz').expect(503);

    await proxy.start();
    let status = 0;
    // Polled until it recovers, however slow the machine (jest's timeout is the bound).
    while (status !== 200) {
      status = (await get()).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    await api.as(undefined).get('/readyz').expect(200);
  });

  /**
   * An app on a database reached through the proxy with `limits`, for `use`; the proxy is thawed and the
   * database closed after, whatever happened.
   */
  async function withLimitedDb(limits: { statementTimeoutMs: number; poolMax?: number }, use: (api: Api, limited: Db) => Promise<void>) {
    const limited = createDb({ kind: 'postgres', url: proxyUrl(), ...limits }, createLogger('silent'));
    try {
      await use(new Api(createApp({ db: limited, logger: createLogger('silent') }), token), limited);
    } finally {
      proxy.thaw();
      await limited.destroy();
    }
  }

  /** Thaws the proxy; requests succeed again by themselves (polled: jest's timeout is the bound). */
  async function recovers(api: Api) {
    proxy.thaw();
    let status = 0;
    while (status !== 200) status = (await api.get('/api/job-roles')).status;
    expect(status).toBe(200);
  }

  it('answers 503 while the database hangs (connections open, nothing answered), and recovers when it answers again', async () => {
    // The set-up through the app without limits: a loaded machine slows it, never answers it 503.
    const setup = new Api(app, token);
    const project = (await setup.post('/api/projects', { name: 'Frozen', currency: 'EUR' }).expect(201)).body.body;
    const task = (await setup.post(`/api/projects/${project.id}/tasks`, { name: 'T', estimated_hours: 1 }).expect(201)).body.body;
    await setup.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
    await withLimitedDb({ statementTimeoutMs: 500 }, async (api) => {
      // A connection of the limited pool open before the freeze (asked again if a slow machine took 500 ms).
      while ((await api.get('/api/job-roles')).status !== 200);
      proxy.freeze();
      await api.as(undefined).get('/readyz').expect(503);
      // A plain read and a prepared statement alike: bounded, never a hang.
      const [frozen, frozenBreakdown] = await Promise.all([api.get('/api/job-roles'), api.get(`/api/project-finance/task/${task.id}/breakdown`)]);
      expect(frozen.status).toBe(503);
      expect(frozen.headers['retry-after']).toBe('1');
      expect(frozenBreakdown.status).toBe(503);
      expect(frozenBreakdown.headers['retry-after']).toBe('1');
      await recovers(api);
    });
  });

  it('gives up a statement the hung server never answers, and replaces its connection', async () => {
    // One pooled connection, open before the freeze: the request after it runs there, where only the
    // read deadline (node-postgres query_timeout, db/read-deadline.ts: the statement timeout plus 5 s) ends its wait. A new
    // connection would instead end in the pool's acquire timeout, with another message.
    await withLimitedDb({ statementTimeoutMs: 1_000, poolMax: 1 }, async (api, limited) => {
      const backendOf = async () => (await limited.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
      const before = await backendOf();
      await api.get('/api/job-roles').expect(200);
      proxy.freeze();
      const hung = await api.get('/api/job-roles');
      expect(hung.status).toBe(503);
      expect(hung.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'The database did not answer in time; try again shortly' });
      await recovers(api);
      // The connection given up was closed, not left in the pool to finish its statement: another one
      // (another server process) answers now.
      expect(await backendOf()).not.toBe(before);
    });
    // Without the deadline the request would wait for good: this test's bound, far past 6 s, fails it.
  }, 120_000);

  it('suspends the token cache while its revocation listener is cut off, and resumes once it reconnects', async () => {
    // An hour: only the listener's state, never the entry's age, can empty it during the test.
    const cache = createTokenCache(3_600_000);
    const listener = listenForRevocations(proxyUrl(), cache, createLogger('silent'));
    try {
      await listener.ready;
      const cached = new Api(createApp({ db, logger: createLogger('silent'), tokenCache: cache }), token);
      const key = hashSecret(token).toString('hex');
      // Polled without a time limit of its own: a busy machine only makes it slower (jest's timeout is the bound).
      const until = async (done: () => boolean) => {
        while (!done()) await new Promise((r) => setTimeout(r, 50));
      };
      await cached.get('/api/job-roles').expect(200);
      expect(cache.get(key)).toBeDefined();

      await proxy.stop();
      // A notification sent now would be lost: nothing cached may be trusted until the listener is back.
      await until(() => cache.get(key) === undefined);
      await proxy.start();
      // It reconnects (after 1 s, then 2 s, ...) and the cache serves again from empty.
      await until(() => {
        cache.set(key, { teamId: 'probe', role: 'viewer', tokenId: 'probe', tokenName: 'probe' });
        return cache.get(key) !== undefined;
      });
    } finally {
      await listener.close();
    }
  });
});
