import { nowIso, today } from '../../../src/clock';
import * as rollups from '../../../src/finance/read-model/rollups.sql';
import { refreshRollups, updateTaskFigures } from '../../../src/finance/read-model/rollups.sql';
import { bringCurrent, refreshProjectLabor } from '../../../src/finance/read-model/freshness';
import { refreshSettings } from '../../../src/finance/read-model/labor';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * A refresh that only re-costs estimates (a raise from today, a rename) adds what each task's figures
 * changed to its own and its ancestors' stored roll-ups instead of summing every subtree again
 * (rollups.sql.ts's updateTaskFigures). The roll-ups it leaves must be exactly the subtree sums:
 * after each change, the stored roll-ups and list rows are compared with the ones refreshRollups sums
 * from scratch over the same stored figures (every live task's, and the archived task's as a refresh
 * of its child sums it), on a tree that mixes billable and non-billable tasks four levels deep, and
 * that holds an archived task with a live child (rows made by hand: the API archives whole subtrees),
 * whose change counts in the archived task's roll-up and not above it.
 * The re-costed tasks are stored three to a statement, so an ancestor's roll-up is added to by
 * several statements, each sent while the next batch is computed.
 */
let h: Harness;
let projectId: string;
let roles: { dev: string; qa: string };
const ids: Record<string, string> = {};

/** Every stored roll-up column and list row of the project's tasks, numbers as trimmed text, by task name. */
async function storedRollups(): Promise<Record<string, Record<string, unknown>>> {
  const columns: { column_name: string }[] = (
    await h.db.raw(
      `select column_name from information_schema.columns
       where table_name = 'task_labor' and (column_name like 'tree_%' or column_name like 'children%') order by column_name`,
    )
  ).rows;
  const rows: Record<string, unknown>[] = (
    await h.db.raw(
      `select l.task_id, l.list_row_json, ${columns.map(({ column_name: c }) => `trim_scale(l.${c}::numeric)::text as ${c}`).join(', ')}
       from task_labor l where l.team_id = ? and l.project_id = ?`,
      [h.teamId, projectId],
    )
  ).rows;
  const names = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
  return Object.fromEntries(rows.map(({ task_id: taskId, ...rest }) => [names[taskId as string] ?? String(taskId), rest]));
}

const writeBatch = refreshSettings.writeBatch;

/** The stored roll-ups once refreshRollups has summed them again from scratch (see above). */
async function summedRollups() {
  await refreshRollups(h.db, h.teamId, projectId, 'all');
  await refreshRollups(h.db, h.teamId, projectId, [ids.orphan as string]);
  return storedRollups();
}

beforeAll(async () => {
  refreshSettings.writeBatch = 3;
  h = await startHarness();
  roles = { dev: (await createJobRole(h.api, 'Developer')).id, qa: (await createJobRole(h.api, 'Tester')).id };
  projectId = (await createProject(h.api)).id;
  await setRateCard(h.api, projectId, [
    { job_role_id: roles.dev, hourly_rate: 100 },
    { job_role_id: roles.qa, hourly_rate: 60.5 },
  ]);
  const ann = (await createMember(h.api, { name: 'Ann' })).id;
  const bo = (await createMember(h.api, { name: 'Bo' })).id;
  await addToProject(h.api, projectId, ann, roles.dev);
  await addToProject(h.api, projectId, bo, roles.qa);
  ids.ann = ann;
  // root (billable) > mid (non-billable) > leaf (billable) > deep (non-billable); other > gone (archived) > orphan.
  const task = async (name: string, fields: Record<string, unknown>) => {
    ids[name] = (await createTask(h.api, projectId, fields)).id;
  };
  await task('root', { estimated_hours: 1.25, assignee_ids: [ann], billable: true });
  await task('mid', { estimated_hours: 2.5, assignee_ids: [ann, bo], billable: false, parent_task_id: ids.root });
  await task('leaf', { estimated_hours: 0.07, assignee_ids: [bo, ann], billable: true, parent_task_id: ids.mid, fixed_cost: 12.5 });
  await task('deep', { estimated_hours: 3, assignee_ids: [ann], billable: false, parent_task_id: ids.leaf });
  await task('qaOnly', { estimated_hours: 4, assignee_ids: [bo], parent_task_id: ids.mid });
  await task('other', { estimated_hours: 1, assignee_ids: [bo] });
  await task('gone', { estimated_hours: 2, assignee_ids: [ann], parent_task_id: ids.other });
  await task('orphan', { estimated_hours: 5, assignee_ids: [ann], parent_task_id: ids.gone });
  await task('solo', { estimated_hours: 1, assignee_ids: [bo] });
  await task('kid', { estimated_hours: 1, assignee_ids: [ann], parent_task_id: ids.solo });
  await task('top', { estimated_hours: 1, assignee_ids: [bo] });
  await task('qaKid', { estimated_hours: 2, assignee_ids: [bo], parent_task_id: ids.top });
  await logTime(h.api, ids.leaf as string, ann, { seconds: 5400, logged_at: '2026-01-15T10:00:00Z' });
  await logTime(h.api, ids.deep as string, bo, { seconds: 1800, logged_at: '2026-01-15T10:00:00Z' });
  // Every task computed and stored; then by hand: 'gone' archived, its child left live, and every stored
  // figure summed again from scratch.
  await expectProjectMatchesOracle(h, projectId);
  await h.db('tasks').where({ team_id: h.teamId, id: ids.gone }).update({ archived_at: h.db.fn.now() });
  await refreshProjectLabor(h.db, h.teamId, projectId);
}, 120_000);
afterAll(async () => {
  refreshSettings.writeBatch = writeBatch;
  await h.close();
});

it("a raise from today adds each re-costed task's change to its roll-up and its ancestors', as sums from scratch give", async () => {
  const before = await storedRollups();
  await setRateCard(h.api, projectId, [
    { job_role_id: roles.dev, hourly_rate: 110.25 },
    { job_role_id: roles.qa, hourly_rate: 60.5 },
  ], today());
  await expectProjectMatchesOracle(h, projectId);
  const added = await storedRollups();
  expect(added).toEqual(await summedRollups());
  // The change climbed: every developer's live task and its ancestors moved, the archived 'gone' with
  // its child's change; 'other', above the archived task, did not, nor 'top', above no developer's task.
  const moved = Object.keys(before).filter((name) => JSON.stringify(before[name]) !== JSON.stringify(added[name]));
  expect(moved.sort()).toEqual(['deep', 'gone', 'kid', 'leaf', 'mid', 'orphan', 'root', 'solo']);
});

it("a rename rewrites its member's tasks, and of their ancestors only those whose figures changed", async () => {
  const versions = async () =>
    Object.fromEntries(
      ((await h.db.raw('select task_id, xmin::text as version from task_labor where team_id = ? and project_id = ?', [h.teamId, projectId])).rows as {
        task_id: string;
        version: string;
      }[]).map((row) => [Object.entries(ids).find(([, id]) => id === row.task_id)?.[0], row.version]),
    );
  const before = await storedRollups();
  const versionsBefore = await versions();
  await h.api.patch(`/api/team-members/${ids.ann}`, { name: 'Zed' }).expect(200);
  await expectProjectMatchesOracle(h, projectId);
  const renamed = await storedRollups();
  const rewritten = Object.entries(await versions()).filter(([name, version]) => versionsBefore[name as string] !== version).map(([name]) => name);
  expect(renamed).toEqual(await summedRollups());
  // 'leaf' splits 0.07 h between Bo and Ann, and now Bo, before Zed, takes the odd hundredth: its
  // figures and its ancestors' change. 'kid' only shows the new name, and 'solo' above it is left alone.
  expect(rewritten.sort()).toEqual(['deep', 'kid', 'leaf', 'mid', 'orphan', 'root']);
  expect(renamed.leaf?.tree_billable_estimated_labor_cost).not.toEqual(before.leaf?.tree_billable_estimated_labor_cost);
  expect(renamed.root?.tree_billable_estimated_labor_cost).not.toEqual(before.root?.tree_billable_estimated_labor_cost);
  expect(renamed.kid?.list_row_json).toContain('"name":"Zed"');
});

it('a raise from a past day, recomputing the task with time logged since and re-costing the others, leaves sums', async () => {
  const before = await storedRollups();
  // Ann's 1.5 h on 'leaf' (15 January) is costed anew: 'leaf' is recomputed in full, in the refresh that
  // re-costs the estimates of Ann's other tasks, under the same ancestors.
  await setRateCard(h.api, projectId, [
    { job_role_id: roles.dev, hourly_rate: 99.99 },
    { job_role_id: roles.qa, hourly_rate: 60.5 },
  ], '2026-01-01');
  await expectProjectMatchesOracle(h, projectId);
  const changed = await storedRollups();
  expect(changed).toEqual(await summedRollups());
  expect(changed.root?.tree_billable_actual_labor_cost).not.toEqual(before.root?.tree_billable_actual_labor_cost);
});

it('a batch that fails to store fails the refresh: nothing is stamped, and the next read brings the figures current', async () => {
  const stamp = () => h.db('project_figures').where({ team_id: h.teamId, project_id: projectId }).first('generation');
  const stampBefore = await stamp();
  const store = updateTaskFigures;
  let calls = 0;
  const failing = jest.spyOn(rollups, 'updateTaskFigures').mockImplementation(async (...args) => {
    calls++;
    // Ann's six live tasks, three a batch: the second and last batch, awaited after the loop (the
    // first is awaited before the second is sent).
    if (calls === 2) throw new Error('batch not stored');
    return store(...args);
  });
  try {
    await setRateCard(h.api, projectId, [
      { job_role_id: roles.dev, hourly_rate: 101 },
      { job_role_id: roles.qa, hourly_rate: 60.5 },
    ], today());
    await expect(bringCurrent(h.db, h.teamId, projectId, nowIso())).rejects.toThrow('batch not stored');
  } finally {
    failing.mockRestore();
  }
  expect(calls).toBe(2);
  expect(await stamp()).toEqual(stampBefore);
  await expectProjectMatchesOracle(h, projectId);
  expect(await storedRollups()).toEqual(await summedRollups());
});
