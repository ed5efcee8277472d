import fc from 'fast-check';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { FIRST_LOG_DAY } from '../../../src/http/validate';
import { today } from '../../../src/clock';

/*
 * The two roll-ups agree: the stored one (SQL sums of the tasks' stored figures, kept up to date by
 * refreshes, read-model/rollups.sql.ts) and the calculator's (rules/calculator.ts's rollUp, which a
 * list with a day range uses). On random trees built through the API, every list (each parent's
 * children, under each billable filter, grouped or not) is read both ways: without a range (stored)
 * and with a range that holds every log (computed), and must be equal. Then a random change is made
 * (a raise from today, which re-costs estimates through the stored roll-ups' deltas; a log; a move;
 * a fixed cost) and every list is compared again.
 */
jest.setTimeout(30 * 60_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const treeArb = fc.record({
  tasks: fc.array(
    fc.record({
      parent: fc.nat(), // index among the tasks before it, or none (below)
      topLevel: fc.boolean(),
      hours: fc.integer({ min: 0, max: 40 }),
      fixedCents: fc.integer({ min: 0, max: 50_000 }),
      billable: fc.boolean(),
      assignees: fc.subarray([0, 1, 2]),
      status: fc.constantFrom(null, 'todo', 'done'),
      logs: fc.array(fc.record({ member: fc.integer({ min: 0, max: 2 }), seconds: fc.integer({ min: 60, max: 20_000 }) }), { maxLength: 2 }),
    }),
    { minLength: 1, maxLength: 9 },
  ),
  change: fc.record({
    kind: fc.constantFrom('raise', 'log', 'move', 'fixed-cost'),
    task: fc.nat(),
    other: fc.nat(),
    amount: fc.integer({ min: 1, max: 90 }),
  }),
});

type Tree = typeof treeArb extends fc.Arbitrary<infer T> ? T : never;

async function lists(projectId: string, parents: readonly (string | null)[], range: boolean) {
  const answers: unknown[] = [];
  for (const filter of ['all', 'billable', 'non-billable']) {
    for (const parent of parents) {
      const query = new URLSearchParams({ billable_filter: filter, group_by: 'status' });
      if (parent) query.set('parent_task_id', parent);
      if (range) query.set('from', FIRST_LOG_DAY);
      const res = await h.api.get(`/api/project-finance/project/${projectId}/tasks?${query}`).expect(200);
      answers.push({ filter, parent, tasks: res.body.body.tasks, totals: res.body.body.totals, groups: res.body.body.groups });
    }
  }
  return answers;
}

it('stored and computed roll-ups agree on random trees, before and after a change', async () => {
  const roles = [await createJobRole(h.api), await createJobRole(h.api)];
  const members: string[] = [];
  const rates = [35.5, 60, 0.07];
  await fc.assert(
    fc.asyncProperty(treeArb, async (tree: Tree) => {
      const project = await createProject(h.api);
      await setRateCard(h.api, project.id, [
        { job_role_id: roles[0]!.id, hourly_rate: rates[0]! },
        { job_role_id: roles[1]!.id, hourly_rate: rates[1]! },
      ]);
      if (members.length === 0) for (const name of ['Ann', 'Bo', 'Cy']) members.push((await createMember(h.api, { name })).id);
      for (const [i, member] of members.entries()) await addToProject(h.api, project.id, member, i === 2 ? null : roles[i]!.id);
      const ids: string[] = [];
      for (const [i, task] of tree.tasks.entries()) {
        const parent = i === 0 || task.topLevel ? null : ids[task.parent % i];
        const created = await createTask(h.api, project.id, {
          estimated_hours: task.hours,
          fixed_cost: task.fixedCents / 100,
          billable: task.billable,
          status: task.status,
          parent_task_id: parent,
          assignee_ids: task.assignees.map((m) => members[m] as string),
        });
        ids.push(created.id);
        for (const log of task.logs) await logTime(h.api, created.id, members[log.member] as string, { seconds: log.seconds });
      }
      const parents = [null, ...ids];
      expect(await lists(project.id, parents, false)).toEqual(await lists(project.id, parents, true));

      const target = ids[tree.change.task % ids.length] as string;
      if (tree.change.kind === 'raise') {
        await setRateCard(h.api, project.id, [{ job_role_id: roles[0]!.id, hourly_rate: rates[0]! + tree.change.amount }], today());
      } else if (tree.change.kind === 'log') {
        await logTime(h.api, target, members[tree.change.other % 3] as string, { seconds: tree.change.amount * 60 });
      } else if (tree.change.kind === 'fixed-cost') {
        await h.api.put(`/api/project-finance/task/${target}/fixed-cost`, { fixed_cost: tree.change.amount }).expect(200);
      } else {
        // A move to the top level or under an earlier task (never under its own subtree: tasks only point back).
        const index = ids.indexOf(target);
        const parent = index === 0 ? null : (ids[tree.change.other % index] as string);
        await h.api.patch(`/api/tasks/${target}`, { parent_task_id: parent }).expect(200);
      }
      expect(await lists(project.id, parents, false)).toEqual(await lists(project.id, parents, true));
    }),
    { numRuns: 12 },
  );
});
