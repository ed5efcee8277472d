import { CALCULATOR_VERSION } from '../../../src/finance/rules/calculator';
import { refreshStaleProjects } from '../../../src/finance/read-model/freshness';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * Stored figures carry the calculator version that computed them. Figures stored by another version
 * (here: rows made wrong by hand, as an older rule would have left them, and stamped with an older
 * version) are recomputed without any write, by the next read or by the start-up pass.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function setUp() {
  const role = await createJobRole(h.api);
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 33.33 }]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bo = await createMember(h.api, { name: 'Bo' });
  for (const m of [ann, bo]) await addToProject(h.api, project.id, m.id, role.id);
  const parent = await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [ann.id, bo.id], fixed_cost: 5 });
  const child = await createTask(h.api, project.id, { estimated_hours: 0.5, assignee_ids: [bo.id], parent_task_id: parent.id });
  await logTime(h.api, child.id, ann.id, { seconds: 1234 });
  await expectProjectMatchesOracle(h, project.id);
  return { project, parent, child };
}

/** What an older calculator could have stored: other costs, other members, other roll-ups. */
async function storeOldRulesFigures(projectId: string) {
  await h.db('task_labor').where({ team_id: h.teamId, project_id: projectId }).update({
    estimated_labor_cost: h.db.raw('estimated_labor_cost + 1'),
    members_json: '[]',
    grouped_members_json: '[]',
    tree_billable_estimated_labor_cost: h.db.raw('tree_billable_estimated_labor_cost + 1'),
    list_row_json: null,
  });
}

it('serves what is stored while the stamp is current (so the next test shows a recomputation)', async () => {
  const { project, parent } = await setUp();
  const before = (await h.api.get(`/api/project-finance/project/${project.id}/tasks?billable_filter=billable`).expect(200)).body.body;
  await storeOldRulesFigures(project.id);
  await h.db.raw('update projects set revision = revision + 1 where team_id = ? and id = ?', [h.teamId, project.id]);
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).increment('revision', 1);
  const after = (await h.api.get(`/api/project-finance/project/${project.id}/tasks?billable_filter=billable`).expect(200)).body.body;
  expect(after.totals.estimated_labor_cost).not.toBe(before.totals.estimated_labor_cost);
  expect((await h.api.get(`/api/project-finance/task/${parent.id}/breakdown`).expect(200)).body.body.members).toEqual([]);
});

it('recomputes untouched tasks on the next read when the calculator version changed', async () => {
  const { project } = await setUp();
  await storeOldRulesFigures(project.id);
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).update({ calculator_version: CALCULATOR_VERSION - 1 });
  await h.db.raw('update projects set revision = revision + 1 where team_id = ? and id = ?', [h.teamId, project.id]);
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).increment('revision', 1);
  await expectProjectMatchesOracle(h, project.id);
});

it('recomputes them at start-up too (refreshStaleProjects, run by migrateToLatest)', async () => {
  const { project, parent } = await setUp();
  await storeOldRulesFigures(project.id);
  await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).update({ calculator_version: CALCULATOR_VERSION - 1 });
  expect(await refreshStaleProjects(h.db)).toBeGreaterThanOrEqual(1);
  const stamp = await h.db('project_figures').where({ team_id: h.teamId, project_id: project.id }).first('calculator_version');
  expect(stamp.calculator_version).toBe(CALCULATOR_VERSION);
  const stored = await h.db('task_labor').where({ team_id: h.teamId, task_id: parent.id }).first('members_json');
  expect(stored.members_json).not.toBe('[]');
  await expectProjectMatchesOracle(h, project.id);
});
