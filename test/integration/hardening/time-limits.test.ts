import request from 'supertest';
import { createApp } from '../../../src/app';
import { createDb, Db } from '../../../src/db/knex';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Api } from '../../support/harness';

/*
 * The service's PostgreSQL connections carry a statement timeout and a lock timeout (DB_STATEMENT_TIMEOUT_MS,
 * DB_LOCK_TIMEOUT_MS): a request that would wait on a busy project or a runaway query answers 503 with
 * Retry-After instead of hanging. PGlite is one connection in-process, with nothing to wait for. Only
 * the requests under test go through the limited connections: the set-up goes through an app on
 * connections without limits, so a loaded machine slows it down but never answers it 503.
 */
const backend = backendFromEnv();
const describeOnServer = describeOnPostgres('one connection in-process, so nothing waits on a lock or a timeout');

describeOnServer('time limits on the database connections (PostgreSQL)', () => {
  let db: Db;
  let setupDb: Db;
  let api: Api;
  let setup: Api;
  beforeAll(async () => {
    const url = backend.kind === 'postgres' ? backend.url : '';
    db = createDb({ kind: 'postgres', url, statementTimeoutMs: 1_000, lockTimeoutMs: 200 }, createLogger('silent'));
    setupDb = createDb({ kind: 'postgres', url, statementTimeoutMs: 0, lockTimeoutMs: 0 }, createLogger('silent'));
    const { token } = await createTeamWithAdmin(setupDb, 'time limits team');
    api = new Api(createApp({ db, logger: createLogger('silent') }), token);
    setup = new Api(createApp({ db: setupDb, logger: createLogger('silent') }), token);
  });
  afterAll(async () => {
    await setupDb.destroy();
    await db.destroy();
  });

  it('answers 503 with Retry-After when a write waits for a project another transaction holds, and succeeds once it is free', async () => {
    const project = (await setup.post('/api/projects', { name: 'Busy', currency: 'EUR' }).expect(201)).body.body;
    const task = (await setup.post(`/api/projects/${project.id}/tasks`, { name: 'T', estimated_hours: 1 }).expect(201)).body.body;

    const holder = createDb({ kind: 'postgres', url: backend.kind === 'postgres' ? backend.url : '' });
    const trx = await holder.transaction();
    try {
      await trx.raw('select 1 from projects where id = ? for update', [project.id]);
      const blocked = await api.patch(`/api/tasks/${task.id}`, { name: 'T2' });
      expect(blocked.status).toBe(503);
      expect(blocked.headers['retry-after']).toBe('1');
      expect(blocked.body.error.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      await trx.rollback();
      await holder.destroy();
    }
    await api.patch(`/api/tasks/${task.id}`, { name: 'T2' }).expect(200);
  });

  it('answers 503 with Retry-After when a time log waits for a project held by another transaction (a statement run outside knex)', async () => {
    const project = (await setup.post('/api/projects', { name: 'Busy logs', currency: 'EUR' }).expect(201)).body.body;
    const task = (await setup.post(`/api/projects/${project.id}/tasks`, { name: 'T', estimated_hours: 1 }).expect(201)).body.body;
    const member = (await setup.post('/api/team-members', { name: 'Logger' }).expect(201)).body.body;
    const holder = createDb({ kind: 'postgres', url: backend.kind === 'postgres' ? backend.url : '' });
    const trx = await holder.transaction();
    try {
      await trx.raw('select 1 from projects where id = ? for update', [project.id]);
      const blocked = await api.post(`/api/tasks/${task.id}/time-logs`, { team_member_id: member.id, seconds: 60 });
      expect(blocked.status).toBe(503);
      expect(blocked.headers['retry-after']).toBe('1');
      // The breakdown (the other statement run outside knex) reads without waiting for the lock.
      await api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
    } finally {
      await trx.rollback();
      await holder.destroy();
    }
    await api.post(`/api/tasks/${task.id}/time-logs`, { team_member_id: member.id, seconds: 60 }).expect(201);
    // Only the acknowledged log was written.
    expect((await setup.get(`/api/tasks/${task.id}/time-logs`).expect(200)).body.body).toHaveLength(1);
    expect((await setup.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200)).body.body.task.logged_hours).toBe(0.02);
  });

  it('cancels a statement that runs past the limit on the server', async () => {
    await expect(db.raw('select pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
    // The connection is usable afterwards.
    expect((await db.raw('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('leaves migrations without limits', async () => {
    const { withoutTimeLimits } = await import('../../../src/db/knex');
    const target = withoutTimeLimits({ kind: 'postgres', url: 'postgres://x@h/d', statementTimeoutMs: 1_000, lockTimeoutMs: 200 });
    expect(target).toMatchObject({ statementTimeoutMs: 0, lockTimeoutMs: 0 });
  });

  it('plans with index lookups as cheap as cached data makes them, and without JIT compilation', async () => {
    // random_page_cost 1.1 (not 4): the stored breakdown's read otherwise scanned every project per task.
    const settings = (await db.raw("select current_setting('random_page_cost') as page, current_setting('jit') as jit")).rows[0];
    expect(settings).toEqual({ page: '1.1', jit: 'off' });
  });
});

describe('/readyz', () => {
  it('answers 503 when the database does not answer at all, instead of hanging', async () => {
    const silent = { raw: () => new Promise(() => undefined), client: {} } as unknown as Db;
    const res = await request(createApp({ db: silent, logger: createLogger('silent') })).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'unavailable' });
  });
});
