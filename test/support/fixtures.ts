import type { Api } from './harness';

/*
 * Builders that create inputs through the public API (as a client would) and fail loudly when the
 * API refuses, so a test's own set-up can never pass silently.
 */

function expectStatus(res: { status: number; body: unknown }, status: number, what: string) {
  if (res.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
}

let counter = 0;
export const unique = (prefix: string) => `${prefix} ${++counter} ${Math.random().toString(36).slice(2, 8)}`;

export async function createJobRole(api: Api, name = unique('Role')) {
  const res = await api.post('/api/job-roles', { name });
  expectStatus(res, 201, 'create job role');
  return res.body.body as { id: string; name: string };
}

export async function createMember(api: Api, fields: { name: string; avatar_url?: string | null; email?: string }) {
  const res = await api.post('/api/team-members', fields);
  expectStatus(res, 201, 'create team member');
  return res.body.body as { id: string; name: string; avatar_url: string | null };
}

export async function createProject(api: Api, fields: { name?: string; currency?: string; budget?: number; time_zone?: string } = {}) {
  const res = await api.post('/api/projects', { name: unique('Project'), ...fields });
  expectStatus(res, 201, 'create project');
  return res.body.body as { id: string; name: string; currency: string };
}

/** Sets the project's rate card from `effectiveFrom` on (default: from the beginning, so it applies to every log). */
export async function setRateCard(
  api: Api,
  projectId: string,
  roles: { job_role_id: string; hourly_rate: number | null }[],
  effectiveFrom = '1970-01-01',
) {
  const res = await api.put(`/api/projects/${projectId}/rate-card`, { roles, effective_from: effectiveFrom });
  expectStatus(res, 200, 'set rate card');
}

export async function addToProject(api: Api, projectId: string, memberId: string, jobRoleId: string | null) {
  const res = await api.put(`/api/projects/${projectId}/members/${memberId}`, { job_role_id: jobRoleId });
  if (res.status !== 201 && res.status !== 200) expectStatus(res, 201, 'add project member');
}

/** A new project whose one job role costs `hourlyRate` (from the beginning), and one member in that role. */
export async function projectWithMember(api: Api, hourlyRate: number, memberName: string) {
  const role = await createJobRole(api);
  const project = await createProject(api);
  await setRateCard(api, project.id, [{ job_role_id: role.id, hourly_rate: hourlyRate }]);
  const member = await createMember(api, { name: memberName });
  await addToProject(api, project.id, member.id, role.id);
  return { role, project, member };
}

export type TaskFields = {
  name?: string;
  estimated_hours?: number;
  billable?: boolean;
  fixed_cost?: number;
  parent_task_id?: string | null;
  assignee_ids?: string[];
  status?: string | null;
  priority?: string | null;
  phase?: string | null;
};

export async function createTask(api: Api, projectId: string, fields: TaskFields = {}) {
  const res = await api.post(`/api/projects/${projectId}/tasks`, { name: unique('Task'), ...fields });
  expectStatus(res, 201, 'create task');
  return res.body.body as { id: string; name: string; finance_version: number };
}

export async function logTime(
  api: Api,
  taskId: string,
  memberId: string,
  amount: ({ seconds: number } | { hours: number }) & { logged_at?: string },
) {
  const res = await api.post(`/api/tasks/${taskId}/time-logs`, { team_member_id: memberId, ...amount });
  expectStatus(res, 201, 'log time');
  return res.body.body as { id: string; seconds: number };
}

export async function breakdown(api: Api, taskId: string, includeSubtasks = false) {
  const res = await api.get(`/api/project-finance/task/${taskId}/breakdown${includeSubtasks ? '?include_subtasks=true' : ''}`);
  expectStatus(res, 200, 'breakdown');
  return res.body.body as Breakdown;
}

export type MemberEntry = {
  team_member_id: string;
  name: string;
  avatar_url: string | null;
  hourly_rate: number;
  estimated_hours: number;
  logged_hours: number;
  estimated_cost: number;
  actual_cost: number;
  job_title_name?: string;
  bill_rate?: number;
  day_rate?: number;
  day_bill_rate?: number;
  estimated_revenue?: number;
  actual_revenue?: number;
  cost_rate_source?: 'member' | 'role' | 'none';
  bill_rate_source?: 'member' | 'role' | 'none';
  cost_lines?: {
    job_role: string;
    hourly_rate: number;
    bill_rate?: number;
    day_rate?: number;
    day_bill_rate?: number;
    logged_hours: number;
    actual_cost: number;
    actual_revenue?: number;
    first_day: string;
    last_day: string;
  }[];
};

export type TaskSummary = {
  id: string;
  name: string;
  project_id: string;
  billable: boolean;
  currency: string;
  estimated_hours: number;
  logged_hours: number;
  estimated_labor_cost: number;
  actual_labor_cost: number;
  fixed_cost: number;
  total_estimated_cost: number;
  total_actual_cost: number;
  estimated_revenue?: number;
  actual_revenue?: number;
  estimated_margin?: number;
  actual_margin?: number;
  has_missing_rates?: boolean;
};

export type Breakdown = {
  task: TaskSummary;
  grouped_members: {
    jobRole: string;
    estimated_hours: number;
    logged_hours: number;
    estimated_cost: number;
    actual_cost: number;
    estimated_revenue?: number;
    actual_revenue?: number;
    members: MemberEntry[];
  }[];
  members: MemberEntry[];
  warnings?: { code: 'MISSING_COST_RATE' | 'MISSING_BILL_RATE'; team_member_id: string; name: string }[];
};
