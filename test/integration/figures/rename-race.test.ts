import { describeOnPostgres } from '../../support/backend';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createMember, createTask, projectWithMember } from '../../support/fixtures';
import { expectBreakdownMatchesOracle, expectListMatchesOracle } from './check';

/*
 * The rename race (issue 12): a task gains an assignee while that member is renamed. Names decide the
 * estimate split, so 0.01 h assigned to "mmm" and to a member renamed from "zzz..." to "aaa..." must go
 * to the renamed one. Fifty rounds on PostgreSQL (PGlite has one connection: nothing runs concurrently).
 */
const onPostgres = describeOnPostgres('one connection, so nothing races');

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

onPostgres('a member renamed while a task gains it as an assignee', () => {
  it('gives every figure the new name and order, 50 rounds out of 50', async () => {
    const { role, project, member: a } = await projectWithMember(h.api, 100, 'mmm');
    for (let round = 0; round < 50; round++) {
      const m = await createMember(h.api, { name: `zzz ${round}` });
      await addToProject(h.api, project.id, m.id, role.id);
      const task = await createTask(h.api, project.id, { estimated_hours: 0.01, assignee_ids: [a.id] });
      // Stored and cached before the race, as in production.
      await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
      await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);
      const assign = h.api.patch(`/api/tasks/${task.id}`, { assignee_ids: [a.id, m.id] }).then((res) => res);
      const rename = pause(round % 5).then(() => h.api.patch(`/api/team-members/${m.id}`, { name: `aaa ${round}` }));
      const [assigned, renamed] = await Promise.all([assign, rename]);
      expect([assigned.status, renamed.status]).toEqual([200, 200]);

      const body = (await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200)).body.body;
      expect(body.members.map((x: { name: string; estimated_hours: number }) => [x.name, x.estimated_hours])).toEqual([
        [`aaa ${round}`, 0.01],
        ['mmm', 0],
      ]);
      await expectBreakdownMatchesOracle(h, task.id, project.id);
      await expectListMatchesOracle(h, project.id);
    }
  }, 300_000);
});
