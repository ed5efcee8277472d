import type { Harness } from '../../support/harness';
import { Filter, oracleBreakdown, oracleList, readInputs } from '../../support/oracle';

/*
 * Compares every answer the service gives about a project's figures (each task's breakdown, alone and
 * with its subtasks, and the list under every filter at the top level and under every task) with the
 * oracle's recomputation from the raw input rows (test/support/oracle.ts).
 */
const FILTERS: Filter[] = ['all', 'billable', 'non-billable'];

export async function expectProjectMatchesOracle(h: Harness, projectId: string, api = h.api): Promise<void> {
  const inputs = await readInputs(h.db, h.teamId, projectId);
  for (const task of inputs.tasks) {
    for (const includeSubtasks of [false, true]) {
      const res = await api.get(`/api/project-finance/task/${task.id}/breakdown${includeSubtasks ? '?include_subtasks=true' : ''}`).expect(200);
      expect({ task: task.id, includeSubtasks, body: res.body.body }).toEqual({
        task: task.id,
        includeSubtasks,
        body: oracleBreakdown(inputs, task.id, includeSubtasks),
      });
    }
  }
  for (const filter of FILTERS) {
    for (const parentId of [null, ...inputs.tasks.map((t) => t.id)]) {
      const query = `billable_filter=${filter}${parentId ? `&parent_task_id=${parentId}` : ''}`;
      const res = await api.get(`/api/project-finance/project/${projectId}/tasks?${query}`).expect(200);
      expect({ query, body: res.body.body }).toEqual({ query, body: oracleList(inputs, filter, parentId) });
    }
  }
}

/** The unfiltered top-level list and every breakdown only (cheaper, for many rounds). */
export async function expectListMatchesOracle(h: Harness, projectId: string, api = h.api): Promise<void> {
  const inputs = await readInputs(h.db, h.teamId, projectId);
  const res = await api.get(`/api/project-finance/project/${projectId}/tasks`).expect(200);
  expect(res.body.body).toEqual(oracleList(inputs, 'all', null));
}

export async function expectBreakdownMatchesOracle(h: Harness, taskId: string, projectId: string, api = h.api): Promise<void> {
  const inputs = await readInputs(h.db, h.teamId, projectId);
  const res = await api.get(`/api/project-finance/task/${taskId}/breakdown`).expect(200);
  expect(res.body.body).toEqual(oracleBreakdown(inputs, taskId, false));
}

/**
 * A task's stored breakdown parts (JSON text) when they are of its project's parts version, what a
 * breakdown may serve; nulls when they are missing or out of date.
 */
export async function currentStoredParts(h: Harness, taskId: string): Promise<{ members_json: string | null; grouped_members_json: string | null }> {
  const row = await h
    .db('task_labor as l')
    .leftJoin('project_figures as pf', (on) => on.on('pf.team_id', 'l.team_id').andOn('pf.project_id', 'l.project_id'))
    .where({ 'l.team_id': h.teamId, 'l.task_id': taskId })
    .first('l.members_json', 'l.grouped_members_json', h.db.raw('l.parts_version = coalesce(pf.parts_version, 0) as current'));
  const current = Boolean(row.current);
  return {
    members_json: current ? (row.members_json as string | null) : null,
    grouped_members_json: current ? (row.grouped_members_json as string | null) : null,
  };
}
