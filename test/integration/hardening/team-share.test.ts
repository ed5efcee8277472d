import request from 'supertest';
import { createApp } from '../../../src/app';
import { createDb, Db } from '../../../src/db/knex';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';

/*
 * One team flooding a busy task must not take the connections other teams need. Team B's writes wait
 * for a project lock held elsewhere; with 2 running per team and 3 waiting in memory, B holds 2 of the
 * pool's 4 connections, its further requests wait without one or get 429, and team A's read answers.
 * Without the per-team share, B's 8 writes would hold all 4 connections and A's read could only fail.
 * PostgreSQL server only: PGlite is one connection in this process.
 */
const backend = backendFromEnv();
const describeOnServer = describeOnPostgres('one connection in this process, so there is no pool to take');
const APP_NAME = 'pfs-team-share-test';

async function until(what: string, probe: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describeOnServer('one team cannot take every connection (PostgreSQL)', () => {
  let db: Db;
  let holder: Db;
  beforeAll(() => {
    const url = new URL(backend.kind === 'postgres' ? backend.url : 'postgres://x@h/d');
    url.searchParams.set('application_name', APP_NAME);
    db = createDb({ kind: 'postgres', url: url.toString(), poolMax: 4, lockTimeoutMs: 0, statementTimeoutMs: 0 }, createLogger('silent'));
    holder = createDb({ kind: 'postgres', url: backend.kind === 'postgres' ? backend.url : '' });
  });
  afterAll(async () => {
    await holder.destroy();
    await db.destroy();
  });

  it('keeps team A answered while team B floods a locked task; B gets 429 with Retry-After past its queue', async () => {
    const app = createApp({ db, logger: createLogger('silent'), teamShare: { perTeam: 2, queuePerTeam: 3 } });
    const teamA = await createTeamWithAdmin(db, 'team share A');
    const teamB = await createTeamWithAdmin(db, 'team share B');
    const as = (token: string) => ({ Authorization: `Bearer ${token}` });
    const project = (await request(app).post('/api/projects').set(as(teamB.token)).send({ name: 'Flooded' }).expect(201)).body.body;
    const task = (await request(app).post(`/api/projects/${project.id}/tasks`).set(as(teamB.token)).send({ name: 'Hot', estimated_hours: 1 }).expect(201)).body.body;
    await request(app).post('/api/projects').set(as(teamA.token)).send({ name: 'Quiet' }).expect(201);

    const lockWaits = async () => {
      const { rows } = await holder.raw(
        `select count(*)::int as n from pg_stat_activity
          where application_name = ? and datname = current_database() and wait_event_type = 'Lock'`,
        [APP_NAME],
      );
      return (rows as { n: number }[])[0]!.n;
    };

    const trx = await holder.transaction();
    const settled: request.Response[] = [];
    let flood: Promise<unknown> = Promise.resolve();
    try {
      await trx.raw('select 1 from projects where id = ? for update', [project.id]);
      flood = Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          request(app)
            .patch(`/api/tasks/${task.id}`)
            .set(as(teamB.token))
            .send({ name: `Hot ${i}` })
            .then((res) => settled.push(res)),
        ),
      );
      await until('two of B’s writes to wait for the lock', async () => (await lockWaits()) === 2);
      await until('B’s excess to be turned away', () => settled.length === 3);
      expect(settled.map((res) => res.status)).toEqual([429, 429, 429]);
      expect(settled.map((res) => res.headers['retry-after'])).toEqual(['1', '1', '1']);
      expect(settled[0]!.body.error.code).toBe('RATE_LIMITED');

      // Team A is answered while B's writes still wait.
      const listA = await request(app).get('/api/projects').set(as(teamA.token));
      expect(listA.status).toBe(200);
      expect(listA.body.body.map((p: { name: string }) => p.name)).toEqual(['Quiet']);
      expect(await lockWaits()).toBe(2);
    } finally {
      await trx.rollback();
    }
    await flood;
    expect(settled.map((res) => res.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
  });
});
