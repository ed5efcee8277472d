import { refreshSettings } from '../../../src/finance/read-model/labor';
import { refreshProjectLabor } from '../../../src/finance/read-model/freshness';
import { Harness, startHarness } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { expectProjectMatchesOracle } from './check';

/*
 * The calculator reads participants a batch of tasks at a time (labor.ts, refreshSettings.readBatch,
 * 150 tasks), the next batch's statement sent while the current one is computed. The test projects
 * are smaller than a batch, so here a batch is two tasks: a whole-project recomputation, a partial
 * one after a rate change, and the lists computed on the fly all go through several batches.
 */
let h: Harness;
const readBatch = refreshSettings.readBatch;

beforeAll(async () => {
  h = await startHarness();
  refreshSettings.readBatch = 2;
});

afterAll(async () => {
  refreshSettings.readBatch = readBatch;
  await h.close();
});

it('computes every task of a project read two tasks at a time as the oracle does', async () => {
  const dev = await createJobRole(h.api, 'Developer');
  const qa = await createJobRole(h.api, 'QA');
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [
    { job_role_id: dev.id, hourly_rate: 80 },
    { job_role_id: qa.id, hourly_rate: 55.5 },
  ]);
  const ann = await createMember(h.api, { name: 'Ann' });
  const ben = await createMember(h.api, { name: 'Ben' });
  await addToProject(h.api, project.id, ann.id, dev.id);
  await addToProject(h.api, project.id, ben.id, qa.id);
  const tasks: { id: string }[] = [];
  for (let i = 0; i < 7; i++) {
    const parent: string | undefined = i === 3 ? tasks[0]?.id : undefined;
    const assignees = i % 3 === 0 ? [ann.id, ben.id] : i % 3 === 1 ? [ann.id] : [];
    tasks.push(await createTask(h.api, project.id, { estimated_hours: i + 0.5, assignee_ids: assignees, fixed_cost: i * 10, ...(parent ? { parent_task_id: parent } : {}) }));
  }
  for (const [i, task] of tasks.entries()) {
    if (i % 2 === 0) await logTime(h.api, task.id, ann.id, { seconds: 1800 * (i + 1) });
    if (i % 3 !== 1) await logTime(h.api, task.id, ben.id, { seconds: 1000 + 37 * i });
  }
  await refreshProjectLabor(h.db, h.teamId, project.id);
  await expectProjectMatchesOracle(h, project.id);

  await setRateCard(h.api, project.id, [
    { job_role_id: dev.id, hourly_rate: 81.25 },
    { job_role_id: qa.id, hourly_rate: 55.5 },
  ]);
  await expectProjectMatchesOracle(h, project.id);
});
