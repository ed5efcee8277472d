import request from 'supertest';
import { nowIso } from '../../../src/clock';
import { createApp } from '../../../src/app';
import { createLogger } from '../../../src/logger';
import { bringCurrent } from '../../../src/finance/read-model/freshness';
import * as labor from '../../../src/finance/read-model/labor';
import { fillBreakdownParts } from '../../../src/finance/read-model/parts-fill';
import { describeOnPostgres } from '../../support/backend';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * The service's own bookkeeping never fails a request, nor a refresh: writers of every kind (time
 * logs, fixed costs, task edits and moves, rate cards, member roles, a member's name), readers
 * (breakdowns that refresh behind their answer, lists, exports) and refreshes and parts fills called
 * directly all run at once on one project, round after round, on PostgreSQL. Any statement that fails
 * with deadlock_detected (40P01), any answer other than the expected status, fails the test; afterwards
 * every figure matches the oracle. PostgreSQL only: PGlite runs one statement at a time, so nothing
 * there can wait on a lock another holds.
 */
const onPostgres = describeOnPostgres('one connection, so nothing runs concurrently and nothing can deadlock');

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const ROUNDS = Number(process.env.DEADLOCK_ROUNDS ?? 12);
const TASKS = 24;

onPostgres('concurrent writers, readers and refreshes on one project', () => {
  it('never meet a deadlock, and leave every figure right', async () => {
    const deadlocks: string[] = [];
    h.db.on('query-error', (err: { code?: string; message?: string; detail?: string }) => {
      if (err.code === '40P01') deadlocks.push(`${err.message}\n${err.detail ?? ''}`);
    });
    // A second app on the same pool that refreshes behind stale breakdowns, as the server does.
    const behind = createApp({ db: h.db, logger: createLogger('silent'), refreshBehindBreakdowns: true, listCacheMb: 32 });
    const token = (h.api as unknown as { token: string }).token;
    const getBehind = (url: string) => request(behind).get(url).set('Authorization', `Bearer ${token}`);

    const roles = [await createJobRole(h.api), await createJobRole(h.api)];
    const project = await createProject(h.api);
    await setRateCard(h.api, project.id, [
      { job_role_id: roles[0]!.id, hourly_rate: 50 },
      { job_role_id: roles[1]!.id, hourly_rate: 80 },
    ]);
    const members: string[] = [];
    for (const name of ['Ann', 'Bo', 'Cy', 'Di']) {
      const member = await createMember(h.api, { name });
      await addToProject(h.api, project.id, member.id, roles[members.length % 2]!.id);
      members.push(member.id);
    }
    const tasks: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const parent = i < 4 ? null : tasks[i % 4];
      const task = await createTask(h.api, project.id, {
        estimated_hours: 2 + (i % 5),
        billable: i % 3 !== 0,
        assignee_ids: [members[i % 4] as string, members[(i + 1) % 4] as string],
        parent_task_id: parent,
      });
      tasks.push(task.id);
    }
    const list = `/api/project-finance/project/${project.id}/tasks`;
    const at = (round: number, i: number) => tasks[(round * 5 + i * 7) % TASKS] as string;
    const member = (round: number, i: number) => members[(round + i) % members.length] as string;
    const refresh = () => bringCurrent(h.db, h.teamId, project.id, nowIso());
    const fill = () => fillBreakdownParts(h.db, h.teamId, project.id);

    for (let round = 0; round < ROUNDS; round++) {
      const writes = [
        logTime(h.api, at(round, 0), member(round, 0), { seconds: 900 + round }),
        logTime(h.api, at(round, 1), member(round, 1), { seconds: 1800 }),
        h.api.put(`/api/project-finance/task/${at(round, 2)}/fixed-cost`, { fixed_cost: 10 + round }),
        h.api.patch(`/api/tasks/${at(round, 3)}`, { estimated_hours: 3 + (round % 4), assignee_ids: [member(round, 3)] }),
        // A move within the tree (under a top-level task other than its own subtree's root).
        h.api.patch(`/api/tasks/${tasks[4 + (round % (TASKS - 4))]}`, { parent_task_id: tasks[(round + 1) % 4] }),
        h.api.put(`/api/projects/${project.id}/rate-card`, {
          roles: [
            { job_role_id: roles[0]!.id, hourly_rate: 50 + round },
            { job_role_id: roles[1]!.id, hourly_rate: 80 - round },
          ],
        }),
        h.api.put(`/api/projects/${project.id}/members/${member(round, 4)}`, { job_role_id: roles[round % 2]!.id }),
        h.api.patch(`/api/team-members/${member(round, 5)}`, { name: `Member ${round}` }),
      ];
      const reads = [
        getBehind(`/api/project-finance/task/${at(round, 4)}/breakdown`),
        getBehind(`/api/project-finance/task/${at(round, 5)}/breakdown`),
        h.api.get(list),
        h.api.get(`${list}?billable_filter=billable&group_by=status`),
        h.api.get(`/api/project-finance/task/${at(round, 6)}/breakdown?include_subtasks=true`),
        h.api.get(`/api/project-finance/project/${project.id}/export?format=csv`),
        getBehind(list),
      ];
      const results = await Promise.allSettled([...writes, ...reads, refresh(), fill(), refresh(), fill()]);
      const failed = results.flatMap((result, i) => {
        if (result.status === 'rejected') return [`#${i}: ${String(result.reason)}`];
        const res = (result.value ?? {}) as { status?: number; text?: string };
        return res.status !== undefined && res.status !== 200 && res.status !== 201 ? [`#${i}: ${res.status} ${res.text?.slice(0, 200)}`] : [];
      });
      expect({ round, failed, deadlocks }).toEqual({ round, failed: [], deadlocks: [] });
    }
    // Refreshes behind breakdowns may still run: one more refresh waits for them (per project, serialised).
    await refresh();
    expect(deadlocks).toEqual([]);
    await expectProjectMatchesOracle(h, project.id);
  }, 600_000);
});

describe('a refresh chosen as a deadlock victim', () => {
  it('runs again, and the read that waited for it answers', async () => {
    const project = await createProject(h.api);
    const task = await createTask(h.api, project.id, { estimated_hours: 2, fixed_cost: 12.5 });
    const refreshTaskLabor = labor.refreshTaskLabor;
    let calls = 0;
    const victim = jest.spyOn(labor, 'refreshTaskLabor').mockImplementation(async (...args) => {
      calls++;
      if (calls === 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
      return refreshTaskLabor(...args);
    });
    try {
      const res = await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
      expect(res.body.body.tasks.map((row: { id: string; fixed_cost: number }) => [row.id, row.fixed_cost])).toEqual([[task.id, 12.5]]);
      expect(calls).toBe(2);
    } finally {
      victim.mockRestore();
    }
  });
});
