import { backendFromEnv } from '../../support/backend';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * Writes landing while a read recomputes a project's figures (finance/read-model/freshness.ts): the recompute never
 * blocks them, and never loses what they changed. After each burst of concurrent reads and writes,
 * every figure matches the oracle. PostgreSQL only (PGlite runs one statement at a time).
 */
const onPostgres = backendFromEnv().kind === 'postgres' ? describe : describe.skip;

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

onPostgres('writes during a recompute', () => {
  it('are all reflected once the reads settle', async () => {
    const role = await createJobRole(h.api);
    const project = await createProject(h.api);
    const members = [];
    for (const name of ['Ann', 'Bo', 'Cy']) {
      const m = await createMember(h.api, { name });
      await addToProject(h.api, project.id, m.id, role.id);
      members.push(m.id);
    }
    const tasks: string[] = [];
    for (let i = 0; i < 30; i++) {
      const parent = i % 3 === 0 ? null : tasks[i - (i % 3)];
      const task = await createTask(h.api, project.id, { estimated_hours: 1 + i / 4, assignee_ids: [members[i % 3] as string], parent_task_id: parent });
      tasks.push(task.id);
    }
    const listPath = `/api/project-finance/project/${project.id}/tasks`;
    for (let round = 0; round < 5; round++) {
      // A rate-card change makes the next read recompute every task; writes and reads race with it.
      await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 10 + round }]);
      const at = (i: number) => tasks[(round * 7 + i) % tasks.length] as string;
      const results = await Promise.all([
        h.api.get(listPath),
        logTime(h.api, at(1), members[round % 3] as string, { seconds: 600 + round }),
        h.api.get(listPath),
        h.api.patch(`/api/tasks/${at(2)}`, { estimated_hours: 2 + round, assignee_ids: [members[(round + 1) % 3]] }),
        h.api.get(`/api/project-finance/task/${at(2)}/breakdown`),
        h.api.patch(`/api/team-members/${members[round % 3]}`, { name: `Name ${round}` }),
        h.api.get(`${listPath}?billable_filter=billable`),
        h.api.put(`/api/project-finance/task/${at(3)}/fixed-cost`, { fixed_cost: round }),
        h.api.get(listPath),
      ]);
      for (const res of results) if ('status' in res) expect(res.status).toBe(200);
      await expectProjectMatchesOracle(h, project.id);
    }
  }, 300_000);
});
