import request from 'supertest';
import { createApp } from '../../../src/app';
import { createDb, Db } from '../../../src/db/knex';
import { createLogger } from '../../../src/logger';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { lockTaskForWrite } from '../../../src/tasks/tasks.service';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Api } from '../../support/harness';

/*
 * Writes that change only a task's own figures (time logs, fixed costs) take their project's lock
 * shared and update no row every such write updates (projects.repository's lockProject): while one is
 * open, another on the same project goes through; a write that changes the tree still waits for it.
 * The service's lock timeout is short here, so a write that waited would answer 503 instead of 201; the
 * set-up goes through an app without it (a loaded machine slows the set-up, never refuses it).
 * PGlite is one connection in-process: nothing runs side by side there.
 */
const backend = backendFromEnv();
const describeOnServer = describeOnPostgres('one connection, so nothing runs side by side');

describeOnServer('time logs on one project run side by side (PostgreSQL)', () => {
  let db: Db;
  let holder: Db;
  let api: Api;
  let setup: Api;
  let teamId: string;
  beforeAll(async () => {
    const url = backend.kind === 'postgres' ? backend.url : '';
    db = createDb({ kind: 'postgres', url, lockTimeoutMs: 300 }, createLogger('silent'));
    holder = createDb({ kind: 'postgres', url });
    const created = await createTeamWithAdmin(db, 'side by side team');
    teamId = created.team.id;
    api = new Api(createApp({ db, logger: createLogger('silent') }), created.token);
    setup = new Api(createApp({ db: holder, logger: createLogger('silent') }), created.token);
  });
  afterAll(async () => {
    await holder.destroy();
    await db.destroy();
  });

  it('logs time on one task while another task\'s time log is uncommitted, and a task move waits for it', async () => {
    const project = (await setup.post('/api/projects', { name: 'Busy' }).expect(201)).body.body;
    const member = (await setup.post('/api/team-members', { name: 'Ann' }).expect(201)).body.body;
    await setup.put(`/api/projects/${project.id}/members/${member.id}`, { job_role_id: null }).expect(201);
    const first = (await setup.post(`/api/projects/${project.id}/tasks`, { name: 'First' }).expect(201)).body.body;
    const second = (await setup.post(`/api/projects/${project.id}/tasks`, { name: 'Second' }).expect(201)).body.body;

    // A time log on First, open: the locks the service takes for it, held.
    const trx = await holder.transaction();
    try {
      await lockTaskForWrite(trx, teamId, first.id, true);
      const log = await request(api.app)
        .post(`/api/tasks/${second.id}/time-logs`)
        .set('Authorization', `Bearer ${api.token}`)
        .send({ team_member_id: member.id, hours: 1 });
      expect(log.status).toBe(201);
      const fixed = await request(api.app)
        .put(`/api/project-finance/task/${second.id}/fixed-cost`)
        .set('Authorization', `Bearer ${api.token}`)
        .send({ fixed_cost: 10 });
      expect(fixed.status).toBe(200);
      // A change to the tree takes the project's lock exclusively: it waits, and gives up after the lock timeout.
      const move = await request(api.app)
        .patch(`/api/tasks/${second.id}`)
        .set('Authorization', `Bearer ${api.token}`)
        .send({ parent_task_id: first.id });
      expect(move.status).toBe(503);
    } finally {
      await trx.rollback();
    }
    await setup.patch(`/api/tasks/${second.id}`, { parent_task_id: first.id }).expect(200);
    const list = (await setup.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)).body.body;
    // Ann has no role (rate 0): 1 h logged, the fixed cost 10.00 rolled up into First.
    expect(list.tasks).toEqual([expect.objectContaining({ id: first.id, logged_hours: 1, fixed_cost: 10, sub_tasks_count: 1 })]);
  });
});
