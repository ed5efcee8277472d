import { z } from 'zod';
import { createTeamBody, createTokenBody, createdTeamResponse, createdTokenResponse, sessionResponse, tokenResponse } from '../auth/tokens.schemas';
import type { Role } from '../auth/roles';
import {
  breakdownQuery,
  breakdownResponse,
  exportQuery,
  fixedCostBody,
  fixedCostHistoryResponse,
  projectTasksQuery,
  projectTasksResponse,
  taskSummary,
} from '../finance/http/finance.schemas';
import { createJobRoleBody, jobRoleResponse } from '../job-roles/job-roles.schemas';
import {
  createProjectBody,
  projectMemberBody,
  projectMemberResponse,
  projectResponse,
  rateCardBody,
  rateCardHistoryResponse,
  rateCardQuery,
  rateCardResponse,
  ratePreviewResponse,
  updateProjectBody,
} from '../projects/projects.schemas';
import { budgetQuery, budgetResponse } from '../budgets/budgets.schemas';
import { memberRatesBody, memberRatesResponse, rateExplanationQuery, rateExplanationResponse } from '../projects/member-rates.schemas';
import { archivedTaskResponse, createTaskBody, taskResponse, updateTaskBody } from '../tasks/tasks.schemas';
import { createTeamMemberBody, teamMemberResponse, updateTeamMemberBody } from '../team-members/team-members.schemas';
import { createTimeLogBody, timeLogResponse } from '../time-logs/time-logs.schemas';
import { pageQuery } from '../http/paging';
import { eventsQuery, eventsResponse } from '../events/events.schemas';
import { createWebhookBody, createdWebhookResponse, deliveryAttemptResponse, webhookResponse } from '../webhooks/webhooks.schemas';
import { errorEnvelope, success } from './common';

/*
 * The OpenAPI 3.1 document, generated from the zod schemas that validate requests (and the response
 * schemas beside them), so it cannot drift from what the routes accept.
 */

type Operation = {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  tag: string;
  role: Role;
  /** Who may call it, when the role alone does not say (default: the role or higher). */
  access?: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  example?: unknown;
  ok: { status: 200 | 201; schema: z.ZodType; alsoStatus?: 200 };
  errors: number[];
  etag?: boolean;
  ifMatch?: boolean;
  /** A list route: takes `limit` and `after`, announces the next page in `Link` (src/http/paging.ts). */
  paged?: boolean;
};

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid input: malformed JSON, wrong types, unknown fields, invalid UUID (VALIDATION_ERROR, INVALID_ID, MALFORMED_JSON)',
  401: 'Missing or invalid bearer token (UNAUTHORIZED)',
  403: 'The token\'s role is too low, or (POST /api/teams) the token is not an admin of the default team (FORBIDDEN)',
  404: 'Unknown id, archived task, or another team\'s resource (TASK_NOT_FOUND, PROJECT_NOT_FOUND, ...)',
  409: 'Conflict: duplicate name, or a change that would break what refers to it (DUPLICATE_NAME, CONFLICT)',
  412: 'If-Match does not match the task\'s finance version (PRECONDITION_FAILED)',
  413: 'Body over 100 KiB (PAYLOAD_TOO_LARGE)',
  415: 'Body that is not JSON (UNSUPPORTED_MEDIA_TYPE)',
  429: 'Over the per-client rate limit (RateLimit headers), or more of this team\'s requests at once than the instance runs and queues, or (project lists, exports, breakdowns with include_subtasks or from/to) more of this team\'s lists and exports than it runs and queues (Retry-After); code RATE_LIMITED',
  500: 'A genuine fault (INTERNAL_ERROR)',
  503: 'The database is unavailable (SERVICE_UNAVAILABLE)',
};

const read = [400, 401, 403, 404];

/** The response header of a list route that has a next page (src/http/paging.ts). */
const LINK_HEADER = {
  description:
    'Sent when a next page exists (absent on the last page): `</api/...?after=<cursor>>; rel="next"`, this request\'s path and query with `after` set, relative to the URL called. See docs/api.md, Pagination.',
  schema: { type: 'string' },
  example: '</api/projects?limit=100&after=WyJwcm9qZWN0cyIsIkFwb2xsbyIsIjlhMGI3YzFkLTIyMjItNDMzMy04NDQ0LTU1NTU2NjY2Nzc3NyJd>; rel="next"',
};

/** Answers that say when to try again. */
const RETRY_AFTER: Record<string, object> = {
  429: { description: 'Seconds to wait before retrying (1 on a team\'s queue)', schema: { type: 'string', example: '1' } },
  503: { description: 'Seconds to wait before retrying: 1', schema: { type: 'string', example: '1' } },
};

const EXAMPLE_ID = '3f1c1b8e-1111-4222-8333-944455556666';
const summaryExample = {
  id: EXAMPLE_ID,
  name: 'Checkout',
  project_id: '9a0b7c1d-2222-4333-8444-555566667777',
  billable: true,
  currency: 'USD',
  estimated_hours: 10,
  logged_hours: 2.11,
  estimated_labor_cost: 835.17,
  actual_labor_cost: 153.31,
  fixed_cost: 99.99,
  total_estimated_cost: 935.16,
  total_actual_cost: 253.3,
  // Dev billed at 150/h, QA at 80/h: 501 + 499.5 + 266.4 estimated, 150 + 40 + 48.8 earned.
  estimated_revenue: 1266.9,
  actual_revenue: 238.8,
  estimated_margin: 331.74,
  actual_margin: -14.5,
  has_missing_rates: false,
};
/** The example task's variance: 935.16 estimated - 253.30 actual. */
const VARIANCE_EXAMPLE = 681.86;
/** A summary's figures without the task's identity. */
const figuresOf = ({ id: _id, name: _name, project_id: _project, billable: _billable, currency: _currency, ...figures }: typeof summaryExample) => figures;
type Line = { job_role: string; hourly_rate: number; bill_rate: number; logged_hours: number; actual_cost: number; actual_revenue: number; first_day: string; last_day: string };
const member = (id: string, name: string, rates: [number, number], est: number, logged: number, costs: [number, number], revenues: [number, number], lines: Line[]) => ({
  team_member_id: id,
  name,
  avatar_url: null,
  hourly_rate: rates[0],
  bill_rate: rates[1],
  estimated_hours: est,
  logged_hours: logged,
  estimated_cost: costs[0],
  actual_cost: costs[1],
  estimated_revenue: revenues[0],
  actual_revenue: revenues[1],
  cost_rate_source: 'role',
  bill_rate_source: 'role',
  cost_lines: lines,
});
const line = (job_role: string, rates: [number, number], logged_hours: number, amounts: [number, number], first_day: string, last_day: string) => ({
  job_role,
  hourly_rate: rates[0],
  bill_rate: rates[1],
  logged_hours,
  actual_cost: amounts[0],
  actual_revenue: amounts[1],
  first_day,
  last_day,
});
const ann = member('a0000000-0000-4000-8000-000000000001', 'Ann', [100, 150], 3.34, 1, [334, 100], [501, 150], [line('Dev', [100, 150], 1, [100, 150], '2026-11-20', '2026-11-20')]);
const ben = member('b0000000-0000-4000-8000-000000000002', 'Ben', [100, 150], 3.33, 0, [333, 0], [499.5, 0], []);
// Cy logged 0.5 h at 45/h before the raise to 50.50/h on 2026-11-19, then 0.61 h after it.
const cy = member('c0000000-0000-4000-8000-000000000003', 'Cy', [50.5, 80], 3.33, 1.11, [168.17, 53.31], [266.4, 88.8], [
  line('QA', [45, 80], 0.5, [22.5, 40], '2026-11-16', '2026-11-18'),
  line('QA', [50.5, 80], 0.61, [30.81, 48.8], '2026-11-19', '2026-11-20'),
]);
/** Worked examples: 10 h over three assignees (3.34, 3.33, 3.33), Dev at 100/h, QA at 50.50/h (45/h until 2026-11-18). */
const RESPONSE_EXAMPLES: Record<string, unknown> = {
  'get /api/project-finance/task/{id}/breakdown': {
    task: summaryExample,
    grouped_members: [
      { jobRole: 'Dev', estimated_hours: 6.67, logged_hours: 1, estimated_cost: 667, actual_cost: 100, estimated_revenue: 1000.5, actual_revenue: 150, members: [ann, ben] },
      { jobRole: 'QA', estimated_hours: 3.33, logged_hours: 1.11, estimated_cost: 168.17, actual_cost: 53.31, estimated_revenue: 266.4, actual_revenue: 88.8, members: [cy] },
    ],
    members: [
      { ...ann, job_title_name: 'Dev' },
      { ...ben, job_title_name: 'Dev' },
      { ...cy, job_title_name: 'QA' },
    ],
    warnings: [],
  },
  'get /api/project-finance/project/{project_id}/tasks': {
    project: { id: summaryExample.project_id, name: 'Website relaunch', currency: 'USD', budget: 50000, rate_unit: 'hour', hours_per_day: 8 },
    tasks: [
      {
        ...summaryExample,
        parent_task_id: null,
        sub_tasks_count: 0,
        variance: VARIANCE_EXAMPLE,
        status: 'doing',
        priority: 'high',
        phase: 'Build',
        assignees: [ann, ben, cy].map((m, i) => ({ team_member_id: m.team_member_id, name: m.name, avatar_url: null, job_title_name: i < 2 ? 'Dev' : 'QA', hourly_rate: m.hourly_rate })),
      },
    ],
    // One task: the totals are its figures.
    totals: { ...figuresOf(summaryExample), variance: VARIANCE_EXAMPLE },
  },
  'put /api/project-finance/task/{task_id}/fixed-cost': summaryExample,
  'get /api/job-roles': [{ id: EXAMPLE_ID, name: 'Engineer', created_at: '2026-11-20T09:30:00.000Z' }],
  'get /api/team-members': [
    { id: ann.team_member_id, name: 'Ann', email: 'ann@example.com', avatar_url: null, created_at: '2026-11-20T09:30:00.000Z', updated_at: '2026-11-20T09:30:00.000Z' },
  ],
  'get /api/projects': [
    { id: summaryExample.project_id, name: 'Website relaunch', currency: 'USD', budget: 50000, time_zone: 'Europe/Paris', rate_unit: 'hour', hours_per_day: 8, hours_budget: 400, budget_period: 'total', budget_alerts: [80, 100], created_at: '2026-11-20T09:30:00.000Z', updated_at: '2026-11-20T09:30:00.000Z' },
  ],
  'get /api/projects/{id}/budget': {
    project_id: summaryExample.project_id,
    currency: 'USD',
    period: { kind: 'month', from: '2026-11-01', to: '2026-11-30' },
    money: { budget: 5000, spent: 4125.5, remaining: 874.5, percent_used: 82.51 },
    hours: { budget: 40, spent: 31.5, remaining: 8.5, percent_used: 78.75 },
    alerts: [
      { kind: 'money', percent: 80, crossed: true, crossed_at: '2026-11-24T16:05:00.000Z' },
      { kind: 'money', percent: 100, crossed: false, crossed_at: null },
      { kind: 'hours', percent: 80, crossed: false, crossed_at: null },
      { kind: 'hours', percent: 100, crossed: false, crossed_at: null },
    ],
  },
  'get /api/session': { team: { id: '00000000-0000-4000-8000-000000000001', name: 'Default team' }, role: 'editor', token: { id: EXAMPLE_ID, name: 'finance screen' } },
  'get /api/tokens': [
    { id: EXAMPLE_ID, name: 'ci', role: 'viewer', created_at: '2026-11-20T09:30:00.000Z', revoked_at: null, expires_at: '2027-02-18T09:30:00.000Z', last_used_at: '2026-11-27T14:02:00.000Z' },
  ],
  'get /api/project-finance/task/{task_id}/fixed-cost/history': [
    { id: 'd0000000-0000-4000-8000-000000000004', old_value: 0, new_value: 99.99, finance_version: 2, changed_by: 'ci', changed_by_token_id: 'e0000000-0000-4000-8000-000000000005', changed_at: '2026-11-20T09:30:00.000Z' },
  ],
};
const webhookExample = { id: 'f0000000-0000-4000-8000-000000000006', url: 'https://hooks.example.com/finance', event_types: ['time_log.created'], description: 'ERP sync', created_at: '2026-11-20T09:30:00.000Z' };
RESPONSE_EXAMPLES['get /api/events'] = {
  events: [
    {
      id: 'd0000000-0000-4000-8000-000000000007',
      seq: 42,
      type: 'time_log.created',
      occurred_at: '2026-11-20T09:30:00.000Z',
      data: { time_log_id: EXAMPLE_ID, project_id: summaryExample.project_id, task_id: summaryExample.id, team_member_id: ann.team_member_id, seconds: 5400, logged_at: '2026-11-20T08:00:00.000Z' },
    },
  ],
  next_after: 42,
};
RESPONSE_EXAMPLES['get /api/webhooks'] = [webhookExample];
RESPONSE_EXAMPLES['delete /api/webhooks/{id}'] = webhookExample;
RESPONSE_EXAMPLES['get /api/webhooks/{id}/deliveries'] = [
  { id: 'a1000000-0000-4000-8000-000000000008', delivery_id: 'a2000000-0000-4000-8000-000000000009', event_id: 'd0000000-0000-4000-8000-000000000007', event_type: 'time_log.created', status_code: 503, error: null, duration_ms: 120, attempted_at: '2026-11-20T09:30:00.000Z', next_attempt_at: '2026-11-20T09:30:05.000Z', outcome: 'retrying' },
];
const write = [400, 401, 403, 404, 413, 415];

const OPERATIONS: Operation[] = [
  { method: 'get', path: '/api/project-finance/task/{id}/breakdown', tag: 'Finance', role: 'viewer', summary: 'Financial breakdown of a task (with include_subtasks=true: of its subtree)', query: breakdownQuery, ok: { status: 200, schema: breakdownResponse }, errors: read, etag: true },
  { method: 'get', path: '/api/project-finance/project/{project_id}/tasks', tag: 'Finance', role: 'viewer', summary: 'Tasks of a project with rolled-up finance figures, totals and optional groups', query: projectTasksQuery, ok: { status: 200, schema: projectTasksResponse }, errors: read },
  { method: 'put', path: '/api/project-finance/task/{task_id}/fixed-cost', tag: 'Finance', role: 'editor', summary: 'Set the fixed cost of a task (optionally conditional with If-Match)', body: fixedCostBody, example: { fixed_cost: 1250.5 }, ok: { status: 200, schema: taskSummary }, errors: [...write, 412], etag: true, ifMatch: true },
  { method: 'get', path: '/api/project-finance/task/{task_id}/fixed-cost/history', tag: 'Finance', role: 'viewer', summary: 'Every change of the task\'s fixed cost, newest first', ok: { status: 200, schema: fixedCostHistoryResponse }, errors: read, paged: true },

  { method: 'post', path: '/api/job-roles', tag: 'Job roles', role: 'editor', summary: 'Create a job role', body: createJobRoleBody, example: { name: 'Engineer' }, ok: { status: 201, schema: jobRoleResponse }, errors: [...write, 409] },
  { method: 'get', path: '/api/job-roles', tag: 'Job roles', role: 'viewer', summary: 'List job roles', ok: { status: 200, schema: z.array(jobRoleResponse) }, errors: [400, 401, 403], paged: true },

  { method: 'post', path: '/api/team-members', tag: 'Team members', role: 'editor', summary: 'Create a team member', body: createTeamMemberBody, example: { name: 'Ann Lee', email: 'ann@example.com', avatar_url: 'https://img.example.com/ann.png' }, ok: { status: 201, schema: teamMemberResponse }, errors: [...write, 409] },
  { method: 'get', path: '/api/team-members', tag: 'Team members', role: 'viewer', summary: 'List team members', ok: { status: 200, schema: z.array(teamMemberResponse) }, errors: [400, 401, 403], paged: true },
  { method: 'get', path: '/api/team-members/{id}', tag: 'Team members', role: 'viewer', summary: 'Read a team member', ok: { status: 200, schema: teamMemberResponse }, errors: read },
  { method: 'patch', path: '/api/team-members/{id}', tag: 'Team members', role: 'editor', summary: 'Change a team member', body: updateTeamMemberBody, example: { avatar_url: null }, ok: { status: 200, schema: teamMemberResponse }, errors: [...write, 409] },

  { method: 'post', path: '/api/projects', tag: 'Projects', role: 'editor', summary: 'Create a project', body: createProjectBody, example: { name: 'Website relaunch', currency: 'EUR', budget: 50000, time_zone: 'Europe/Paris' }, ok: { status: 201, schema: projectResponse }, errors: [...write, 409] },
  { method: 'get', path: '/api/projects', tag: 'Projects', role: 'viewer', summary: 'List projects', ok: { status: 200, schema: z.array(projectResponse) }, errors: [400, 401, 403], paged: true },
  { method: 'get', path: '/api/projects/{id}', tag: 'Projects', role: 'viewer', summary: 'Read a project', ok: { status: 200, schema: projectResponse }, errors: read },
  { method: 'patch', path: '/api/projects/{id}', tag: 'Projects', role: 'editor', summary: 'Change a project (a currency change that strands finer amounts is a 409; a time zone change re-dates every time log; rate_unit and hours_per_day change only while it has no rate entries, else 409)', body: updateProjectBody, example: { budget: 60000, hours_budget: 500, budget_period: 'month', budget_alerts: [50, 80, 100] }, ok: { status: 200, schema: projectResponse }, errors: [...write, 409] },
  { method: 'get', path: '/api/projects/{id}/budget', tag: 'Projects', role: 'viewer', summary: 'The project\'s budgets: spent, remaining and percent used in the period (a month of a monthly budget with ?month=YYYY-MM), and which alert thresholds are crossed', query: budgetQuery, ok: { status: 200, schema: budgetResponse }, errors: read },
  { method: 'get', path: '/api/projects/{id}/rate-card', tag: 'Projects', role: 'viewer', summary: 'The project\'s rates in force on a day (default today in its time zone)', query: rateCardQuery, ok: { status: 200, schema: rateCardResponse }, errors: read },
  { method: 'get', path: '/api/projects/{id}/rate-card/history', tag: 'Projects', role: 'viewer', summary: 'Every rate-card entry, with the day it takes effect and when and by whom it was written', ok: { status: 200, schema: rateCardHistoryResponse }, errors: read, paged: true },
  { method: 'put', path: '/api/projects/{id}/rate-card', tag: 'Projects', role: 'admin', summary: 'Set the rate card in force from effective_from on (default today): entries dated on or after it are replaced, earlier ones kept', body: rateCardBody, example: { roles: [{ job_role_id: '3f1c1b8e-1111-4222-8333-944455556666', hourly_rate: 95.5, bill_rate: 140 }], effective_from: '2026-12-01' }, ok: { status: 200, schema: rateCardResponse }, errors: write },
  { method: 'post', path: '/api/projects/{id}/rate-card/preview', tag: 'Projects', role: 'admin', summary: 'Dry run of PUT /rate-card: the project totals and every changed task before and after, nothing written', body: rateCardBody, example: { roles: [{ job_role_id: '3f1c1b8e-1111-4222-8333-944455556666', hourly_rate: 99 }], effective_from: '2026-12-01' }, ok: { status: 200, schema: ratePreviewResponse }, errors: write },
  { method: 'get', path: '/api/projects/{id}/members', tag: 'Projects', role: 'viewer', summary: 'Members of the project with their job roles', ok: { status: 200, schema: z.array(projectMemberResponse.omit({ project_id: true })) }, errors: read, paged: true },
  { method: 'put', path: '/api/projects/{id}/members/{team_member_id}', tag: 'Projects', role: 'admin', summary: 'Add a member to the project (201, its first role from the beginning) or change its job role from effective_from on (200)', body: projectMemberBody, example: { job_role_id: '3f1c1b8e-1111-4222-8333-944455556666', effective_from: '2026-12-01' }, ok: { status: 201, alsoStatus: 200, schema: projectMemberResponse }, errors: write },
  { method: 'get', path: '/api/projects/{id}/members/{team_member_id}/rates', tag: 'Projects', role: 'viewer', summary: 'Explain a member\'s rates on a day (default today in the project\'s time zone): each rate\'s amount, source (member, role or none) and the entry that decided, and its own entries', query: rateExplanationQuery, ok: { status: 200, schema: rateExplanationResponse }, errors: read },
  { method: 'put', path: '/api/projects/{id}/members/{team_member_id}/rates', tag: 'Projects', role: 'admin', summary: 'Set a member\'s own rates in the project from effective_from on (default today): its entries dated on or after it are replaced, earlier ones kept; a rate null defers to its role\'s, a rate left out keeps the member\'s own in force on that day', body: memberRatesBody, example: { hourly_rate: 80, bill_rate: 120, effective_from: '2026-12-01' }, ok: { status: 200, schema: memberRatesResponse }, errors: write },
  { method: 'delete', path: '/api/projects/{id}/members/{team_member_id}', tag: 'Projects', role: 'admin', summary: 'Remove a member from the project (409 while assigned to its tasks)', ok: { status: 200, schema: projectMemberResponse }, errors: [...read, 409] },

  { method: 'post', path: '/api/projects/{id}/tasks', tag: 'Tasks', role: 'editor', summary: 'Create a task', body: createTaskBody, example: { name: 'Checkout', estimated_hours: 10, fixed_cost: 0, assignee_ids: [], status: 'todo' }, ok: { status: 201, schema: taskResponse }, errors: write },
  { method: 'get', path: '/api/tasks/{id}', tag: 'Tasks', role: 'viewer', summary: 'Read a task', ok: { status: 200, schema: taskResponse }, errors: read },
  { method: 'patch', path: '/api/tasks/{id}', tag: 'Tasks', role: 'editor', summary: 'Change a task', body: updateTaskBody, example: { status: 'done', estimated_hours: 12.5 }, ok: { status: 200, schema: taskResponse }, errors: write },
  { method: 'delete', path: '/api/tasks/{id}', tag: 'Tasks', role: 'editor', summary: 'Archive a task and its descendants', ok: { status: 200, schema: archivedTaskResponse }, errors: read },
  { method: 'post', path: '/api/tasks/{id}/time-logs', tag: 'Time logs', role: 'editor', summary: 'Log time on a task (exactly one of hours or seconds)', body: createTimeLogBody, example: { team_member_id: '3f1c1b8e-1111-4222-8333-944455556666', hours: 1.5, logged_at: '2026-11-20T09:30:00Z', note: 'Review' }, ok: { status: 201, schema: timeLogResponse }, errors: write },
  { method: 'get', path: '/api/tasks/{id}/time-logs', tag: 'Time logs', role: 'viewer', summary: 'Time logs of a task, newest first', ok: { status: 200, schema: z.array(timeLogResponse) }, errors: read, paged: true },
  { method: 'delete', path: '/api/time-logs/{id}', tag: 'Time logs', role: 'editor', summary: 'Delete a time log', ok: { status: 200, schema: timeLogResponse }, errors: read },

  { method: 'get', path: '/api/session', tag: 'Access', role: 'viewer', summary: 'The calling token\'s team and role (what a screen may show)', ok: { status: 200, schema: sessionResponse }, errors: [401] },
  { method: 'post', path: '/api/tokens', tag: 'Access', role: 'admin', summary: 'Create a token (the secret is returned this once), optionally expiring after expires_in_days', body: createTokenBody, example: { name: 'ci', role: 'viewer', expires_in_days: 90 }, ok: { status: 201, schema: createdTokenResponse }, errors: write },
  { method: 'get', path: '/api/tokens', tag: 'Access', role: 'admin', summary: 'List the team\'s tokens (without secrets), with their expiry and last use (to the minute)', ok: { status: 200, schema: z.array(tokenResponse) }, errors: [400, 401, 403], paged: true },
  { method: 'delete', path: '/api/tokens/{id}', tag: 'Access', role: 'admin', summary: 'Revoke a token, effective immediately', ok: { status: 200, schema: tokenResponse }, errors: read },
  { method: 'post', path: '/api/teams', tag: 'Access', role: 'admin', access: 'Requires an admin token of the default team (the operator\'s); 403 for any other team\'s admin.', summary: 'Create an empty team and its first admin token (the operator only)', body: createTeamBody, example: { name: 'Agency B' }, ok: { status: 201, schema: createdTeamResponse }, errors: write },

  { method: 'get', path: '/api/events', tag: 'Events', role: 'viewer', summary: 'The team\'s event feed in seq order: every change of a finance input (docs/webhooks.md)', query: eventsQuery, ok: { status: 200, schema: eventsResponse }, errors: [400, 401, 403] },
  { method: 'post', path: '/api/webhooks', tag: 'Events', role: 'admin', summary: 'Register a webhook: every event of the given types is POSTed to its URL, signed (docs/webhooks.md); the secret is returned this once', body: createWebhookBody, example: { url: 'https://hooks.example.com/finance', event_types: ['time_log.created', 'task.fixed_cost.changed'], description: 'ERP sync' }, ok: { status: 201, schema: createdWebhookResponse }, errors: write },
  { method: 'get', path: '/api/webhooks', tag: 'Events', role: 'admin', summary: 'List the team\'s webhooks (without secrets), oldest first', ok: { status: 200, schema: z.array(webhookResponse) }, errors: [400, 401, 403], paged: true },
  { method: 'delete', path: '/api/webhooks/{id}', tag: 'Events', role: 'admin', summary: 'Delete a webhook: nothing more is delivered to it', ok: { status: 200, schema: webhookResponse }, errors: read },
  { method: 'get', path: '/api/webhooks/{id}/deliveries', tag: 'Events', role: 'admin', summary: 'The webhook\'s delivery attempts, newest first: event, status code or error, duration, next attempt', ok: { status: 200, schema: z.array(deliveryAttemptResponse) }, errors: read, paged: true },
];

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

function parameters(op: Operation) {
  const path = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    description: 'UUID (anything else is a 400)',
    schema: { type: 'string', format: 'uuid' },
    example: EXAMPLE_ID,
  }));
  const querySchema = op.paged ? pageQuery : op.query;
  const query = querySchema
    ? Object.entries((jsonSchema(querySchema, 'input').properties ?? {}) as Record<string, object>).map(([name, schema]) => ({
        name,
        in: 'query',
        required: false,
        schema,
      }))
    : [];
  const ifMatch = op.ifMatch
    ? [{ name: 'If-Match', in: 'header', required: false, description: 'The finance version from an ETag, e.g. "3"; a stale one gets 412', schema: { type: 'string' } }]
    : [];
  return [...path, ...query, ...ifMatch];
}

function operationObject(op: Operation) {
  const ok = {
    description: 'Success',
    ...(op.etag ? { headers: { ETag: { description: 'The task\'s finance version, e.g. "3"', schema: { type: 'string' } } } } : {}),
    ...(op.paged ? { headers: { Link: LINK_HEADER } } : {}),
    content: {
      'application/json': {
        schema: jsonSchema(success(op.ok.schema), 'output'),
        ...(RESPONSE_EXAMPLES[`${op.method} ${op.path}`] ? { example: { success: true, body: RESPONSE_EXAMPLES[`${op.method} ${op.path}`] } } : {}),
      },
    },
  };
  const responses: Record<string, unknown> = { [op.ok.status]: ok };
  if (op.ok.alsoStatus) responses[op.ok.alsoStatus] = ok;
  for (const status of [...op.errors, 429, 503]) responses[status] = { $ref: `#/components/responses/E${status}` };
  return {
    summary: op.summary,
    description: op.access ?? `Requires a token with the ${op.role} role (or higher).`,
    operationId: `${op.method}${op.path.replace(/\{(\w+)\}/g, 'By_$1').replace(/[^A-Za-z0-9_]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    tags: [op.tag],
    parameters: parameters(op),
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(op.body, 'input'), example: op.example } } } }
      : {}),
    responses,
  };
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    paths[op.path] = { ...(paths[op.path] ?? {}), [op.method]: operationObject(op) };
  }
  const plain = (description: string, schema: object) => ({
    get: { summary: description, security: [], tags: ['Operations'], responses: { 200: { description: 'OK', content: { 'application/json': { schema } } } } },
  });
  paths['/healthz'] = plain('The process is alive', { type: 'object', properties: { status: { const: 'ok' } } });
  paths['/api/project-finance/project/{project_id}/export'] = {
    get: {
      summary: 'The project list as a CSV or XLSX file: every listed task at every level, and the list totals',
      description: 'Requires a token with the viewer role (or higher). Same filters as the project list.',
      operationId: 'getApiProjectFinanceProjectByProjectIdExport',
      tags: ['Finance'],
      parameters: [
        { name: 'project_id', in: 'path', required: true, description: 'UUID (anything else is a 400)', schema: { type: 'string', format: 'uuid' } },
        ...Object.entries((jsonSchema(exportQuery, 'input').properties ?? {}) as Record<string, object>).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
      ],
      responses: {
        200: {
          description: 'The file, named <project>-finance-<YYYY-MM-DD>.csv|xlsx (Content-Disposition: attachment)',
          content: {
            'text/csv': { schema: { type: 'string' }, example: 'Task,Task id,Level,Parent task,...\r\n' },
            'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
          },
        },
        ...Object.fromEntries([...read, 429, 503].map((status) => [status, { $ref: `#/components/responses/E${status}` }])),
      },
    },
  };
  paths['/metrics'] = {
    get: {
      summary: 'Prometheus metrics: requests and latency per route and status, database pool, process',
      description: 'Open unless METRICS_TOKEN is set; then it needs Authorization: Bearer <METRICS_TOKEN> (API tokens are not accepted).',
      security: [{}, { metricsToken: [] }],
      tags: ['Operations'],
      responses: {
        200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
        401: { $ref: '#/components/responses/E401' },
      },
    },
  };
  paths['/readyz'] = {
    get: {
      summary: 'Start-up is complete and the database is reachable',
      security: [],
      tags: ['Operations'],
      responses: {
        200: { description: 'Ready', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ready' } } } } } },
        503: {
          description: 'Still starting (`starting`) or the database is unreachable (`unavailable`)',
          content: { 'application/json': { schema: { type: 'object', properties: { status: { enum: ['starting', 'unavailable'] } } } } },
        },
      },
    },
  };
  const errorSchema = jsonSchema(errorEnvelope, 'output');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Project finance service',
      version: '0.1.0',
      description:
        'Labor hours and costs of tasks, grouped by job role and member, plus fixed costs. Money is exact: rounded once per member to the currency\'s minor unit (half away from zero), every aggregate the exact sum below it.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token from POST /api/tokens or the start-up output' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when the service sets one (GET /metrics only)' },
      },
      responses: Object.fromEntries(
        Object.entries(ERROR_TEXT).map(([status, description]) => [
          `E${status}`,
          { description, ...(RETRY_AFTER[status] ? { headers: { 'Retry-After': RETRY_AFTER[status] } } : {}), content: { 'application/json': { schema: errorSchema } } },
        ]),
      ),
    },
  };
}
