import { createDb, Db } from '../../../src/db/knex';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createMember, createTask, projectWithMember } from '../../support/fixtures';
import { holdLocks, until, untilWaiting, waitersOf } from '../../support/locks';
import { expectBreakdownMatchesOracle, expectListMatchesOracle } from './check';

/*
 * The rename race (issue 12): a task gains an assignee while that member is renamed. Names decide the
 * estimate split, so 0.01 h assigned to "mmm" and to a member renamed from "zzz..." to "aaa..." must go
 * to the renamed one. The interleaving is staged with locks the test holds:
 *   1. the assignment takes the project's lock, then waits for the task's row (held by the test);
 *   2. the rename is sent while the assignment is open: it waits too (for the project's lock, or, were
 *      the rename to find the member's projects without it, for the member's row, held by the test);
 *   3. the assignment commits; the rename goes on to the member's row and waits there;
 *   4. a read starts refreshing the stored figures while the rename is still open: it computes them
 *      with the old name and the new assignee, and waits to store them for the rename's project lock
 *      (or answers at once, were there none); only the rename's own record of what it changed can make
 *      the next read recompute;
 *   5. the rename commits, and every figure must have the new name and order.
 * A rename that looked up the member's projects before the assignment committed (its lock taken after,
 * or none) leaves the figures of step 4 behind, every time. PostgreSQL only (PGlite has one connection).
 */
const backend = backendFromEnv();
const onPostgres = describeOnPostgres('one connection, so nothing races');

let h: Harness;
let holder: Db;
beforeAll(async () => {
  h = await startHarness();
  if (backend.kind === 'postgres') holder = createDb({ kind: 'postgres', url: backend.url });
});
afterAll(async () => {
  await holder?.destroy();
  await h.close();
});

onPostgres('a member renamed while a task gains it as an assignee', () => {
  it('gives every figure the new name and order, the interleaving staged by locks', async () => {
    const { role, project, member: a } = await projectWithMember(h.api, 100, 'mmm');
    for (let round = 0; round < 3; round++) {
      const m = await createMember(h.api, { name: `zzz ${round}` });
      await addToProject(h.api, project.id, m.id, role.id);
      const task = await createTask(h.api, project.id, { estimated_hours: 0.01, assignee_ids: [a.id] });
      // Stored and cached before the race, as in production.
      await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
      await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200);

      const taskRow = await holdLocks(holder, (trx) => trx.raw('select 1 from tasks where team_id = ? and id = ? for update', [h.teamId, task.id]));
      const memberRow = await holdLocks(holder, (trx) => trx.raw('select 1 from team_members where team_id = ? and id = ? for no key update', [h.teamId, m.id]));
      try {
        const assign = h.api.patch(`/api/tasks/${task.id}`, { assignee_ids: [a.id, m.id] }).then((res) => res);
        await untilWaiting(holder, [taskRow.pid], 1);
        const rename = h.api.patch(`/api/team-members/${m.id}`, { name: `aaa ${round}` }).then((res) => res);
        await untilWaiting(holder, [taskRow.pid, memberRow.pid], 2);
        await taskRow.trx.commit();
        expect((await assign).status).toBe(200);
        // The rename now waits for the member's row, after whatever it did under the project's lock.
        await untilWaiting(holder, [memberRow.pid], 1);
        let answered = false;
        const read = h.api.get(`/api/project-finance/project/${project.id}/tasks`).then((res) => ((answered = true), res));
        await until(async () => answered || (await waitersOf(holder, [memberRow.pid])) >= 2);
        await memberRow.trx.commit();
        expect([(await rename).status, (await read).status]).toEqual([200, 200]);
      } finally {
        for (const held of [taskRow, memberRow]) if (!held.trx.isCompleted()) await held.trx.rollback();
      }

      const body = (await h.api.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200)).body.body;
      expect({ round, members: body.members.map((x: { name: string; estimated_hours: number }) => [x.name, x.estimated_hours]) }).toEqual({
        round,
        members: [
          [`aaa ${round}`, 0.01],
          ['mmm', 0],
        ],
      });
      await expectBreakdownMatchesOracle(h, task.id, project.id);
      await expectListMatchesOracle(h, project.id);
    }
  });
});
