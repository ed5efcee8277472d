import { createDb, Db } from '../../../src/db/knex';
import { backendFromEnv, describeOnPostgres } from '../../support/backend';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, setRateCard } from '../../support/fixtures';
import { holdLocks, until, untilWaiting } from '../../support/locks';
import { expectProjectMatchesOracle } from './check';

/*
 * Writes landing while a read recomputes a project's figures (finance/read-model/freshness.ts): the recompute never
 * blocks them, and never loses what they changed. Each write is staged in the middle of a refresh: a
 * rate-card change makes the next read recompute every task; the test holds one task's stored row
 * (task_labor), so the refresh has read the marks and the revision and computed its figures when it
 * waits to store them; the write is made and committed then; the row is let go and the refresh ends.
 * Every figure must then match the oracle: a refresh that removed marks it did not read, or stamped its
 * figures with a revision read after the write (past a currency change's reset revision), would leave
 * the write's change out, every time.
 * PostgreSQL only (PGlite runs one statement at a time).
 */
const backend = backendFromEnv();
const onPostgres = describeOnPostgres('one statement at a time, so no write lands during a recompute');

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

onPostgres('writes during a recompute', () => {
  it('are all reflected once the refresh they landed in has ended', async () => {
    const role = await createJobRole(h.api);
    const project = await createProject(h.api);
    const members: string[] = [];
    for (const name of ['Ann', 'Bo', 'Cy']) {
      const m = await createMember(h.api, { name });
      await addToProject(h.api, project.id, m.id, role.id);
      members.push(m.id);
    }
    const tasks: string[] = [];
    for (let i = 0; i < 9; i++) {
      const parent = i % 3 === 0 ? null : tasks[i - (i % 3)];
      const task = await createTask(h.api, project.id, { estimated_hours: 1 + i / 4, assignee_ids: [members[i % 3] as string], parent_task_id: parent });
      tasks.push(task.id);
    }
    const listPath = `/api/project-finance/project/${project.id}/tasks`;
    await h.api.get(listPath).expect(200);
    const column = async (table: string, id: string, name: string) => (await h.db(table).where({ team_id: h.teamId, id }).first(name))?.[name];

    // Each write, and how the test sees that it has committed (its response may wait for the refresh).
    const writes: { what: string; send: (round: number) => PromiseLike<{ status: number }>; committed: (round: number) => Promise<boolean> }[] = [
      {
        what: 'a time log (marks a task only)',
        send: () => h.api.post(`/api/tasks/${tasks[4]}/time-logs`, { team_member_id: members[1], seconds: 600 }),
        committed: async (round) => Number((await h.db('time_logs').where({ team_id: h.teamId, task_id: tasks[4] }).count({ n: '*' }))[0]?.n) === round + 1,
      },
      {
        what: 'a fixed cost (marks a task only)',
        send: (round) => h.api.put(`/api/project-finance/task/${tasks[5]}/fixed-cost`, { fixed_cost: 10 + round }),
        committed: async (round) => Number(await column('tasks', tasks[5] as string, 'fixed_cost')) === 10 + round,
      },
      {
        what: 'an estimate and assignees (bumps the revision)',
        send: (round) => h.api.patch(`/api/tasks/${tasks[7]}`, { estimated_hours: 2 + round, assignee_ids: [members[(round + 1) % 3]] }),
        committed: async (round) => Number(await column('tasks', tasks[7] as string, 'estimated_hours')) === 2 + round,
      },
      {
        what: 'a rename (a mark of an input)',
        send: (round) => h.api.patch(`/api/team-members/${members[0]}`, { name: `Zed ${round}` }),
        committed: async (round) => (await column('team_members', members[0] as string, 'name')) === `Zed ${round}`,
      },
      {
        what: 'a rate card (a mark of an input)',
        send: (round) => h.api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: role.id, hourly_rate: 50 + round }], effective_from: '1970-01-01' }),
        committed: async (round) => (await h.db('project_rate_cards').where({ team_id: h.teamId, project_id: project.id, hourly_rate: 50 + round }).first('job_role_id')) !== undefined,
      },
      {
        what: 'a currency (every task, the reset revision)',
        send: (round) => h.api.patch(`/api/projects/${project.id}`, { currency: round % 2 ? 'EUR' : 'GBP' }),
        committed: async (round) => (await column('projects', project.id, 'currency')) === (round % 2 ? 'EUR' : 'GBP'),
      },
    ];

    for (const [round, write] of writes.entries()) {
      // Every task's figures out of date: the next read recomputes them all.
      await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 10 + round }]);
      const stored = await holdLocks(holder, (trx) => trx.raw('select 1 from task_labor where team_id = ? and task_id = ? for update', [h.teamId, tasks[0] as string]));
      let read: PromiseLike<{ status: number }> | undefined;
      let sent: PromiseLike<{ status: number }> | undefined;
      try {
        read = h.api.get(listPath).then((res) => res);
        await untilWaiting(holder, [stored.pid], 1);
        sent = write.send(round).then((res) => res);
        await until(() => write.committed(round));
        await stored.trx.commit();
        const written = [200, 201].includes((await sent).status);
        expect({ what: write.what, read: (await read).status, written }).toEqual({ what: write.what, read: 200, written: true });
      } finally {
        if (!stored.trx.isCompleted()) await stored.trx.rollback();
      }
      await expectProjectMatchesOracle(h, project.id);
    }
  });
});
