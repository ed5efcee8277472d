import type { Api } from '../../support/harness';
import { addToProject, createJobRole, createMember, createProject, createTask } from '../../support/fixtures';

/*
 * Budget tests' set-up: a project whose one role (Dev) costs 100.00 an hour from the beginning, so an
 * hour logged is 100.00 of spent and every expectation is hours x 100 by hand.
 */

export type Crossed = {
  project_id: string;
  kind: 'money' | 'hours';
  percent: number;
  budget: number;
  spent: number;
  period: { kind: 'total' | 'month'; from: string | null; to: string | null };
};

/** A project (in `timeZone`) with the budget fields given, Dev at 100.00, Ann a Dev, and one task. */
export async function budgetedProject(api: Api, budget: Record<string, unknown>, timeZone = 'UTC') {
  const role = await createJobRole(api);
  const project = await createProject(api, { time_zone: timeZone });
  await api.put(`/api/projects/${project.id}/rate-card`, { roles: [{ job_role_id: role.id, hourly_rate: 100 }], effective_from: '1970-01-01' }).expect(200);
  const ann = await createMember(api, { name: 'Ann' });
  await addToProject(api, project.id, ann.id, role.id);
  const task = await createTask(api, project.id, { estimated_hours: 10, assignee_ids: [ann.id] });
  if (Object.keys(budget).length > 0) await api.patch(`/api/projects/${project.id}`, budget).expect(200);
  return { role, project, ann, task };
}

/** The seq of the team's last event (read position before a step). */
export async function feedEnd(api: Api): Promise<number> {
  let after = 0;
  for (;;) {
    const page = (await api.get(`/api/events?after=${after}&limit=1000`).expect(200)).body.body as { events: unknown[]; next_after: number };
    if (page.events.length === 0) return after;
    after = page.next_after;
  }
}

/** The budget.threshold_crossed events of the project after `after`, in seq order. */
export async function crossingsAfter(api: Api, projectId: string, after = 0): Promise<Crossed[]> {
  const all: Crossed[] = [];
  let cursor = after;
  for (;;) {
    const page = (await api.get(`/api/events?after=${cursor}&limit=1000&type=budget.threshold_crossed`).expect(200)).body.body as {
      events: { data: Crossed }[];
      next_after: number;
    };
    all.push(...page.events.map((event) => event.data).filter((data) => data.project_id === projectId));
    if (page.events.length === 0) return all;
    cursor = page.next_after;
  }
}

/** The project's budget status (GET /budget), optionally of a month. */
export async function budgetOf(api: Api, projectId: string, month?: string) {
  return (await api.get(`/api/projects/${projectId}/budget${month ? `?month=${month}` : ''}`).expect(200)).body.body;
}

/** A total budget's period in an event or a status. */
export const TOTAL = { kind: 'total', from: null, to: null };
