import { describeOnPostgres } from '../../support/backend';
import { Api, Harness, startHarness } from '../../support/harness';
import { RunningService, kill, startSecondInstance } from '../../support/processes';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * Two instances of the service on one PostgreSQL: this test's app and a second service started as a
 * process of its own (its own connection pool, list and token caches, refreshes in flight and
 * listeners, none shared with the first, as in production). A write through either is seen by both at
 * once, and both answer what the oracle computes.
 */
const onPostgres = describeOnPostgres('one process opens PGlite, so there is no second instance');

let h: Harness;
let second: RunningService | undefined;
let other: Api;
beforeAll(async () => {
  h = await startHarness();
  // As production starts it (from the sources), with the default token and list caches.
  const started = await startSecondInstance(h);
  second = started?.second;
  if (started) other = started.other;
});
afterAll(async () => {
  if (second) await kill(second);
  await h.close();
});

onPostgres('two instances on one database', () => {
  it('answer the same, after writes through either of them', async () => {
    expect(second?.child.pid).not.toBe(process.pid);
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
