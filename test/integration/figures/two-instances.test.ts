import { createApp } from '../../../src/app';
import { createDb, Db } from '../../../src/db/knex';
import { createLogger } from '../../../src/logger';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Api, Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * Two instances of the service (two apps, two connection pools, two list caches) on one PostgreSQL:
 * a write through either is seen by both at once, and both answer what the oracle computes.
 */
const onPostgres = describeOnPostgres('one process opens PGlite, so there is no second instance');

let h: Harness;
let db2: Db | undefined;
let other: Api;
beforeAll(async () => {
  h = await startHarness();
  const backend = backendFromEnv();
  if (backend.kind !== 'postgres') return;
  db2 = createDb({ kind: 'postgres', url: backend.url });
  const app = createApp({ db: db2, logger: createLogger('silent'), tokenCacheSeconds: 5, listCacheMb: 32 });
  other = new Api(app, h.api.token);
});
afterAll(async () => {
  await db2?.destroy();
  await h.close();
});

onPostgres('two instances on one database', () => {
  it('answer the same, after writes through either of them', async () => {
    const role = await createJobRole(h.api);
    const project = await createProject(h.api);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 70 }]);
    const ann = await createMember(h.api, { name: 'Ann' });
    const bo = await createMember(other, { name: 'Bo' });
    await addToProject(h.api, project.id, ann.id, role.id);
    await addToProject(other, project.id, bo.id, null);
    const parent = await createTask(h.api, project.id, { estimated_hours: 3, assignee_ids: [ann.id, bo.id] });
    const child = await createTask(other, project.id, { estimated_hours: 1.5, assignee_ids: [ann.id], parent_task_id: parent.id });
    const listPath = `/api/project-finance/project/${project.id}/tasks`;
    const writes: [string, () => Promise<unknown>][] = [
      ['log through A', () => logTime(h.api, child.id, bo.id, { seconds: 2700 })],
      ['estimate through B', () => other.patch(`/api/tasks/${child.id}`, { estimated_hours: 2.25 }).expect(200)],
      ['rate card through A', () => setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 90 }])],
      ['role through B', () => addToProject(other, project.id, bo.id, role.id)],
      ['rename through A', () => h.api.patch(`/api/team-members/${bo.id}`, { name: 'Al' }).expect(200)],
      ['fixed cost through B', () => other.put(`/api/project-finance/task/${parent.id}/fixed-cost`, { fixed_cost: 10 }).expect(200)],
    ];
    for (const [, write] of writes) {
      // Both instances have the list cached before the write.
      await h.api.get(listPath).expect(200);
      await other.get(listPath).expect(200);
      await write();
      // Both at once right after it, then each in full against the oracle.
      const [a, b] = await Promise.all([h.api.get(listPath).expect(200), other.get(listPath).expect(200)]);
      expect(b.body.body).toEqual(a.body.body);
      await expectProjectMatchesOracle(h, project.id, other);
      await expectProjectMatchesOracle(h, project.id);
    }
  }, 300_000);
});
