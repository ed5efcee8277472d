import { randomUUID } from 'node:crypto';
import { getBreakdown } from '../../../src/finance/finance.service';
import * as participants from '../../../src/finance/inputs/participants';
import { storedBreakdown } from '../../../src/finance/read-model/breakdown.sql';
import { createTeamWithAdmin } from '../../../src/teams/teams.service';
import { Api, Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { oracleBreakdown, readInputs } from '../../support/oracle';

/*
 * Breakdowns asked for in the same turn of the event loop are read from the database by one statement
 * (src/db/batched-reads.ts). Each answer must still be its own task's, for its own team: checked here
 * against the oracle's recomputation from the raw inputs (test/support/oracle.ts), with other teams'
 * tasks, archived tasks and unknown ids mixed in among the ones read together.
 */
let h: Harness;
let roles: { dev: string; qa: string };
let other: { api: Api; teamId: string; projectId: string; taskId: string };
let projectId: string;
let tasks: string[];
let archived: string;

beforeAll(async () => {
  h = await startHarness();
  const dev = await createJobRole(h.api, 'Developer');
  const qa = await createJobRole(h.api, 'QA');
  projectId = (await createProject(h.api)).id;
  await setRateCard(h.api, projectId, [
    { job_role_id: dev.id, hourly_rate: 100 },
    { job_role_id: qa.id, hourly_rate: 70.5 },
  ]);
  roles = { dev: dev.id, qa: qa.id };
  const ann = await createMember(h.api, { name: 'Ann' });
  const bob = await createMember(h.api, { name: 'Bob' });
  const cat = await createMember(h.api, { name: 'Cat' });
  await addToProject(h.api, projectId, ann.id, dev.id);
  await addToProject(h.api, projectId, bob.id, qa.id);
  await addToProject(h.api, projectId, cat.id, null);
  tasks = [];
  const assignees = [[ann.id], [bob.id], [ann.id, bob.id], [ann.id, bob.id, cat.id], [cat.id], []];
  for (const [i, ids] of assignees.entries()) {
    const task = await createTask(h.api, projectId, { estimated_hours: i + 1.5, assignee_ids: ids, fixed_cost: i * 10 });
    tasks.push(task.id);
    for (const member of ids) await logTime(h.api, task.id, member, { seconds: 900 * (i + 1) });
  }
  archived = (await createTask(h.api, projectId, { estimated_hours: 2, assignee_ids: [ann.id] })).id;
  await h.api.delete(`/api/tasks/${archived}`).expect(200);

  // A second team with a task of its own, in the same database.
  const team = await createTeamWithAdmin(h.db, `other team ${randomUUID()}`);
  const api = h.api.as(team.token);
  const otherProject = (await createProject(api)).id;
  const role = await createJobRole(api, 'Developer');
  await setRateCard(api, otherProject, [{ job_role_id: role.id, hourly_rate: 55 }]);
  const dan = await createMember(api, { name: 'Dan' });
  await addToProject(api, otherProject, dan.id, role.id);
  const task = await createTask(api, otherProject, { estimated_hours: 4, assignee_ids: [dan.id] });
  await logTime(api, task.id, dan.id, { seconds: 3600 });
  other = { api, teamId: team.team.id, projectId: otherProject, taskId: task.id };

  // Lists bring both projects' stored figures current: the breakdowns below are served from them.
  await h.api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
  await other.api.get(`/api/project-finance/project/${other.projectId}/tasks`).expect(200);
}, 120_000);
afterAll(async () => {
  await h.close();
});

it('answers breakdowns asked for at once each with its own task, for its own team', async () => {
  const mine = await readInputs(h.db, h.teamId, projectId);
  const theirs = await readInputs(h.db, other.teamId, other.projectId);
  const unknown = randomUUID();
  const asked: { api: Api; taskId: string; expected: unknown }[] = [
    ...tasks.map((taskId) => ({ api: h.api, taskId, expected: oracleBreakdown(mine, taskId, false) })),
    { api: h.api, taskId: other.taskId, expected: 404 },
    { api: other.api, taskId: other.taskId, expected: oracleBreakdown(theirs, other.taskId, false) },
    { api: h.api, taskId: archived, expected: 404 },
    { api: h.api, taskId: unknown, expected: 404 },
    { api: other.api, taskId: tasks[0] as string, expected: 404 },
    ...[...tasks].reverse().map((taskId) => ({ api: h.api, taskId, expected: oracleBreakdown(mine, taskId, false) })),
  ];
  const answers = await Promise.all(asked.map(({ api, taskId }) => api.get(`/api/project-finance/task/${taskId}/breakdown`)));
  answers.forEach((res, i) => {
    const { taskId, expected } = asked[i]!;
    if (expected === 404) expect({ taskId, status: res.status, code: res.body.error?.code }).toEqual({ taskId, status: 404, code: 'TASK_NOT_FOUND' });
    else expect({ taskId, status: res.status, body: res.body.body }).toEqual({ taskId, status: 200, body: expected });
  });
});

it('reads the keys asked for in one turn with one statement, in groups of at most 64 different keys, each answer in its place', async () => {
  const statements: unknown[][] = [];
  const onQuery = (query: { sql: string; bindings: unknown[] }) => {
    if (query.sql.includes('with ordinality as k (team_id, task_id, known, key)')) statements.push(query.bindings);
  };
  h.db.on('query', onQuery);
  try {
    const keys = [
      ...tasks.map((taskId) => ({ teamId: h.teamId, taskId })),
      { teamId: h.teamId, taskId: other.taskId },
      { teamId: other.teamId, taskId: other.taskId },
      { teamId: h.teamId, taskId: archived },
    ];
    // Asked for in one go, as requests taken up in one turn of the loop ask.
    const rows = await Promise.all(keys.map((key) => storedBreakdown(h.db, key)));
    expect(statements).toHaveLength(1);
    expect(rows.map((row) => row?.id)).toEqual([...tasks, undefined, other.taskId, undefined]);
    expect(rows.map((row) => row?.project_id)).toEqual([...tasks.map(() => projectId), undefined, other.projectId, undefined]);

    // 70 different keys: two statements. Known tasks among unknown ids, each answered in its place.
    statements.length = 0;
    const many = Array.from({ length: 70 }, (_, i) => ({ teamId: h.teamId, taskId: i % 12 === 0 ? (tasks[i / 12] as string) : randomUUID() }));
    const manyRows = await Promise.all(many.map((key) => storedBreakdown(h.db, key)));
    expect(statements).toHaveLength(2);
    expect(manyRows.map((row) => row?.id)).toEqual(many.map((key) => (tasks.includes(key.taskId) ? key.taskId : undefined)));

    // One task asked for by several requests in one turn is read once; each gets its row.
    statements.length = 0;
    const repeated = tasks.flatMap((taskId) => [taskId, taskId, taskId]).map((taskId) => ({ teamId: h.teamId, taskId }));
    const repeatedRows = await Promise.all(repeated.map((key) => storedBreakdown(h.db, key)));
    expect(repeatedRows.map((row) => row?.id)).toEqual(repeated.map((key) => key.taskId));
    expect(statements).toHaveLength(1);
    const taskList = statements[0]!.find((binding) => typeof binding === 'string' && binding.includes(tasks[0] as string)) as string;
    expect(taskList.split(',').sort()).toEqual([...tasks].sort());

    // Ids that are not UUIDs name no task, and never reach the comma-separated lists of the statement.
    statements.length = 0;
    const odd = [
      { teamId: `${other.teamId},${h.teamId}`, taskId: tasks[0] as string },
      { teamId: h.teamId, taskId: `${tasks[0]},${tasks[1]}` },
    ];
    expect(await Promise.all(odd.map((key) => storedBreakdown(h.db, key)))).toEqual([undefined, undefined]);
    expect(statements).toHaveLength(0);
  } finally {
    h.db.off('query', onQuery);
  }
});

it('computes the tasks found out of date in one turn together: one read of their participants, each answer its own task', async () => {
  // Rates changed back to the first day: every task of the project is out of date, none refreshed yet.
  await setRateCard(h.api, projectId, [
    { job_role_id: roles.dev, hourly_rate: 120.25 },
    { job_role_id: roles.qa, hourly_rate: 64 },
  ]);
  const mine = await readInputs(h.db, h.teamId, projectId);
  const theirs = await readInputs(h.db, other.teamId, other.projectId);
  const lists: string[] = [];
  const onQuery = (query: { sql: string; bindings: unknown[] }) => {
    if (!query.sql.includes('participant (task_id, team_member_id, is_assignee, has_logged_time)')) return;
    const list = query.bindings.find((binding) => typeof binding === 'string' && binding.includes(','));
    lists.push(typeof list === 'string' ? list : '');
  };
  h.db.on('query', onQuery);
  try {
    // Asked for in one go, as breakdowns taken up in one turn of the loop are; the other team's task is current.
    const keys = [...tasks.map((taskId) => ({ teamId: h.teamId, taskId })), { teamId: other.teamId, taskId: other.taskId }];
    const answers = await Promise.all(keys.map(({ teamId, taskId }) => getBreakdown(h.db, teamId, taskId, false)));
    expect(answers.map((answer) => answer.staleProject)).toEqual([...tasks.map(() => projectId), undefined]);
    const bodies = answers.map((answer) => JSON.parse(answer.answer.toString('utf8')).body);
    expect(bodies).toEqual([...tasks.map((taskId) => oracleBreakdown(mine, taskId, false)), oracleBreakdown(theirs, other.taskId, false)]);
    expect(lists).toHaveLength(1);
    expect((lists[0] as string).split(',').sort()).toEqual([...tasks].sort());
  } finally {
    h.db.off('query', onQuery);
  }
});

it('answers the other projects\' out-of-date breakdowns of a turn when one project\'s statements fail', async () => {
  // Both projects out of date: a back-dated rate card each.
  await setRateCard(h.api, projectId, [{ job_role_id: roles.dev, hourly_rate: 99 }]);
  const theirRole = (await other.api.get('/api/job-roles').expect(200)).body.body[0].id as string;
  await setRateCard(other.api, other.projectId, [{ job_role_id: theirRole, hourly_rate: 56 }]);
  const mine = await readInputs(h.db, h.teamId, projectId);
  const read = participants.participantsInScope;
  // The other team's project's read fails (as on a statement timeout), this team's not.
  const failing = jest.spyOn(participants, 'participantsInScope').mockImplementation((db, teamId, ...rest) => {
    if (teamId === other.teamId) return Promise.reject(new Error('the other project failed'));
    return read(db, teamId, ...rest);
  });
  try {
    const asked = [
      getBreakdown(h.db, h.teamId, tasks[0] as string, false),
      getBreakdown(h.db, other.teamId, other.taskId, false),
      getBreakdown(h.db, h.teamId, tasks[1] as string, false),
    ];
    const [first, theirs, second] = await Promise.allSettled(asked);
    expect(theirs).toMatchObject({ status: 'rejected', reason: { message: 'the other project failed' } });
    const bodies = [first, second].map((settled) => {
      if (settled?.status !== 'fulfilled') throw new Error(`rejected: ${String((settled as PromiseRejectedResult).reason)}`);
      expect(settled.value.staleProject).toBe(projectId);
      return JSON.parse(settled.value.answer.toString('utf8')).body;
    });
    expect(bodies).toEqual([oracleBreakdown(mine, tasks[0] as string, false), oracleBreakdown(mine, tasks[1] as string, false)]);
  } finally {
    failing.mockRestore();
  }
});
