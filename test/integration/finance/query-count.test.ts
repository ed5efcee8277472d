import { today } from '../../../src/clock';
import { bringCurrent } from '../../../src/finance/read-model/freshness';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, breakdown, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';

/*
 * The finance reads must cost a fixed number of SQL statements: counted here (not timed) while the
 * data grows in assignees, loggers, logs and tasks.
 */
let h: Harness;
let statements = 0;
// The finance statements: a token's last use is recorded in the background, once a minute (auth/token-usage.ts).
const count = (query: { sql: string }) => {
  if (!query.sql.startsWith('insert into "api_token_usage"')) statements++;
};

beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function statementsOf(action: () => Promise<unknown>): Promise<number> {
  statements = 0;
  h.db.on('query', count);
  try {
    await action();
  } finally {
    h.db.off('query', count);
  }
  return statements;
}

it('counts the same statements for a breakdown and a project list however much data there is', async () => {
  const role = await createJobRole(h.api);
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 10 }]);
  const members: string[] = [];
  const addMembers = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const member = await createMember(h.api, { name: `Member ${members.length}` });
      await addToProject(h.api, project.id, member.id, role.id);
      members.push(member.id);
    }
  };
  await addMembers(1);
  const parent = await createTask(h.api, project.id, { estimated_hours: 5, assignee_ids: members });
  await createTask(h.api, project.id, { parent_task_id: parent.id, assignee_ids: members });
  await logTime(h.api, parent.id, members[0] as string, { seconds: 60 });

  // Right after a write, a list first brings the marked tasks current (finance/read-model/freshness.ts): a fixed
  // number of statements too. Then the stored figures are current, and reads cost what they cost.
  const measure = async () => {
    await bringCurrent(h.db, h.teamId, project.id, today());
    await logTime(h.api, parent.id, members[0] as string, { seconds: 1 });
    const afterWrite = await statementsOf(() => h.api.get(`/api/project-finance/project/${project.id}/tasks?billable_filter=billable`).expect(200));
    await bringCurrent(h.db, h.teamId, project.id, today());
    return {
      afterWrite,
      breakdown: await statementsOf(() => breakdown(h.api, parent.id)),
      subtree: await statementsOf(() => breakdown(h.api, parent.id, true)),
      list: await statementsOf(() => h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200)),
    };
  };
  const small = await measure();

  // Grow everything: 20x the members (assigned and logging), many logs, many tasks two levels deep.
  await addMembers(19);
  await h.api.patch(`/api/tasks/${parent.id}`, { assignee_ids: members.slice(0, 10) }).expect(200);
  for (const member of members) {
    for (let i = 0; i < 3; i++) await logTime(h.api, parent.id, member, { seconds: 60 + i });
  }
  for (let i = 0; i < 15; i++) {
    const child = await createTask(h.api, project.id, { parent_task_id: parent.id, assignee_ids: members.slice(i, i + 3) });
    await createTask(h.api, project.id, { parent_task_id: child.id, assignee_ids: members.slice(0, 2) });
    await logTime(h.api, child.id, members[i] as string, { seconds: 600 });
  }
  const large = await measure();

  expect(large).toEqual(small);
  // The token was authenticated before (cached): a breakdown reads its stored row (1); the subtree
  // reads the task, its descendants and their participants (3); the list the project and its tasks (2).
  expect(small).toMatchObject({ breakdown: 1, subtree: 3, list: 2 });
});

it('adds one statement for a token this instance has not authenticated in the last seconds', async () => {
  const project = await createProject(h.api);
  const task = await createTask(h.api, project.id, { estimated_hours: 1 });
  await bringCurrent(h.db, h.teamId, project.id, today());
  const created = await h.api.post('/api/tokens', { name: 'fresh', role: 'viewer' }).expect(201);
  const fresh = h.api.as(created.body.body.token as string);
  expect(await statementsOf(() => fresh.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200))).toBe(2);
  expect(await statementsOf(() => fresh.get(`/api/project-finance/task/${task.id}/breakdown`).expect(200))).toBe(1);
});
