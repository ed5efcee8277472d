import type { Knex } from 'knex';
import { groupBy } from '../group-by';
import type { Actor } from '../auth/roles';
import { AppError, notFound } from '../http/errors';
import { checkAmountDecimals } from '../http/validate';
import { getProject, presentProject } from '../projects/projects.service';
import { listFixedCostChanges } from '../tasks/tasks.repository';
import { recordFixedCost, requireTask } from '../tasks/tasks.service';
import {
  MemberFigures,
  TaskTotals,
  UNASSIGNED_ROLE,
  addTotals,
  compareMembers,
  compareText,
  taskTotals,
  combineTaskFinances,
  groupByRole,
  variance,
} from './calculator';
import { ZERO, toDecimal } from './money';
import { financeOf, memberInputsByTask } from './labor';
import * as repo from './finance.repository';
import type { ProjectTasksQuery } from './finance.schemas';

type TaskIdentity = { id: string; name: string; project_id: string; billable: boolean };

function presentTotals(totals: TaskTotals) {
  return {
    estimated_hours: totals.estimatedHours,
    logged_hours: totals.loggedHours,
    estimated_labor_cost: totals.estimatedLaborCost,
    actual_labor_cost: totals.actualLaborCost,
    fixed_cost: totals.fixedCost,
    total_estimated_cost: totals.totalEstimatedCost,
    total_actual_cost: totals.totalActualCost,
  };
}

function presentSummary(task: TaskIdentity, currency: string, totals: TaskTotals) {
  return {
    id: task.id,
    name: task.name,
    project_id: task.project_id,
    billable: task.billable,
    currency,
    ...presentTotals(totals),
  };
}

function presentMember(member: MemberFigures) {
  return {
    team_member_id: member.teamMemberId,
    name: member.name,
    avatar_url: member.avatarUrl,
    hourly_rate: member.hourlyRate,
    estimated_hours: member.estimatedHours,
    logged_hours: member.loggedHours,
    estimated_cost: member.estimatedCost,
    actual_cost: member.actualCost,
  };
}

/** Computes a task's finance, alone or with its non-archived descendants, in two or three queries. */
async function taskFinance(db: Knex, teamId: string, taskId: string, includeSubtasks: boolean) {
  const task = await requireTask(db, teamId, taskId);
  const scope: repo.Scope = { kind: includeSubtasks ? 'subtree' : 'task', projectId: task.project_id, taskId };
  const [tasks, participants] = await Promise.all([
    includeSubtasks ? repo.tasksInScope(db, teamId, scope) : Promise.resolve([task]),
    repo.participantsInScope(db, teamId, scope),
  ]);
  const membersByTask = memberInputsByTask(participants);
  const finance = combineTaskFinances(tasks.map((t) => financeOf(t, membersByTask.get(t.id), task.currency)));
  return { task, finance };
}

export async function getBreakdown(db: Knex, teamId: string, taskId: string, includeSubtasks: boolean) {
  const { task, finance } = await taskFinance(db, teamId, taskId, includeSubtasks);
  return {
    financeVersion: task.finance_version,
    body: {
      task: presentSummary(task, task.currency, finance.totals),
      grouped_members: groupByRole(finance.members).map((group) => ({
        jobRole: group.jobRole,
        estimated_hours: group.estimatedHours,
        logged_hours: group.loggedHours,
        estimated_cost: group.estimatedCost,
        actual_cost: group.actualCost,
        members: group.members.map(presentMember),
      })),
      members: finance.members.map((member) => ({ ...presentMember(member), job_title_name: member.jobRole })),
    },
  };
}

export function matchesIfMatch(header: string | undefined, version: number): boolean {
  if (header === undefined) return true;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etagOf(version));
}

export const etagOf = (version: number) => `"${version}"`;

export async function updateFixedCost(db: Knex, actor: Actor, taskId: string, fixedCost: number, ifMatch: string | undefined) {
  await db.transaction(async (trx) => {
    const task = await requireTask(trx, actor.teamId, taskId, true);
    checkAmountDecimals('fixed_cost', fixedCost, task.currency);
    if (!matchesIfMatch(ifMatch, task.finance_version)) {
      throw new AppError(412, 'PRECONDITION_FAILED', `If-Match does not match the task's current version ${etagOf(task.finance_version)}`);
    }
    await recordFixedCost(trx, actor, task, toDecimal(fixedCost));
  });
  const { task, finance } = await taskFinance(db, actor.teamId, taskId, false);
  return { financeVersion: task.finance_version, body: presentSummary(task, task.currency, finance.totals) };
}

export async function fixedCostHistory(db: Knex, teamId: string, taskId: string) {
  await requireTask(db, teamId, taskId);
  const rows = await listFixedCostChanges(db, teamId, taskId);
  return rows.map((row) => ({ ...row, old_value: toDecimal(row.old_value), new_value: toDecimal(row.new_value) }));
}

type ListedTask = { task: repo.TaskFiguresRow; own: TaskTotals; passes: boolean; children: ListedTask[] };

const ZERO_TOTALS = addTotals([]);

function ownTotals(row: repo.TaskFiguresRow): TaskTotals {
  return taskTotals({
    estimatedHours: toDecimal(row.estimated_hours),
    loggedHours: toDecimal(row.logged_hours),
    estimatedLaborCost: toDecimal(row.estimated_labor_cost),
    actualLaborCost: toDecimal(row.actual_labor_cost),
    fixedCost: toDecimal(row.fixed_cost),
  });
}

function presentAssignees(rows: readonly repo.AssigneeRow[]) {
  return rows
    .map((a) => ({ teamMemberId: a.team_member_id, name: a.name, avatarUrl: a.avatar_url, jobRole: a.job_role, hourlyRate: a.hourly_rate }))
    .sort(compareMembers)
    .map((a) => ({
      team_member_id: a.teamMemberId,
      name: a.name,
      avatar_url: a.avatarUrl,
      job_title_name: a.jobRole ?? UNASSIGNED_ROLE,
      hourly_rate: a.hourlyRate === null ? ZERO : toDecimal(a.hourlyRate),
    }));
}

/** What a list filter selects: the tasks whose own figures count, and where the listing starts. */
export type ListFilter = { billable_filter: ProjectTasksQuery['billable_filter']; parent_task_id?: string };

/**
 * A project's task tree, rolled up: the project's tasks come with their stored labor figures (labor.ts)
 * from one query, their assignees from another. `candidates` are the tasks the listing starts from
 * (top level, or the children of parent_task_id); every node under them knows its rolled-up totals
 * (over itself and its descendants that pass the filter) and whether it is listed.
 */
async function projectTree(db: Knex, teamId: string, projectId: string, filter: ListFilter) {
  const project = await getProject(db, teamId, projectId);
  const [tasks, assignees] = await Promise.all([
    repo.taskFiguresInProject(db, teamId, projectId),
    repo.assigneesInProject(db, teamId, projectId),
  ]);
  const assigneesByTask = groupBy(assignees, (row) => row.task_id);
  const passes = (t: repo.TaskFiguresRow) =>
    filter.billable_filter === 'all' || t.billable === (filter.billable_filter === 'billable');

  const nodes = new Map<string, ListedTask>();
  for (const task of tasks) nodes.set(task.id, { task, own: ownTotals(task), passes: passes(task), children: [] });
  const roots: ListedTask[] = [];
  for (const node of nodes.values()) {
    if (node.task.parent_task_id === null) roots.push(node);
    else nodes.get(node.task.parent_task_id)?.children.push(node);
  }

  let candidates = roots;
  if (filter.parent_task_id !== undefined) {
    const parent = nodes.get(filter.parent_task_id.toLowerCase());
    if (!parent) throw notFound('TASK_NOT_FOUND', 'Parent task');
    candidates = parent.children;
  }
  const rolled = rollUp(candidates);
  const listed = (node: ListedTask) => rolled.get(node)?.listed ?? false;
  const totalsOf = (node: ListedTask) => rolled.get(node)?.totals ?? ZERO_TOTALS;

  /** A list row: the task's summary with its rolled-up figures. */
  const rowOf = (node: ListedTask) => {
    const totals = totalsOf(node);
    return {
      ...presentSummary(node.task, project.currency, totals),
      parent_task_id: node.task.parent_task_id,
      sub_tasks_count: node.children.filter(listed).length,
      variance: variance(totals),
      status: node.task.status,
      priority: node.task.priority,
      phase: node.task.phase,
      assignees: presentAssignees(assigneesByTask.get(node.task.id) ?? []),
    };
  };
  const listedCandidates = candidates.filter(listed);
  return {
    project,
    rowOf,
    listedCandidates,
    listedChildren: (node: ListedTask) => node.children.filter(listed),
    totals: presentListSums(listedCandidates.map(totalsOf)),
    totalsOf,
  };
}

/** One row per listed task: the sums over the task and its descendants that pass the filter. */
export async function listProjectTasks(db: Knex, teamId: string, projectId: string, query: ProjectTasksQuery) {
  const tree = await projectTree(db, teamId, projectId, query);
  const { id, name, currency, budget } = presentProject(tree.project);
  const body: Record<string, unknown> = {
    project: { id, name, currency, budget },
    tasks: tree.listedCandidates.map(tree.rowOf),
    totals: tree.totals,
  };
  if (query.group_by) {
    body.groups = groupRows(
      tree.listedCandidates.map((node) => ({ ...node.task, totalsForSums: tree.totalsOf(node) })),
      query.group_by,
    );
  }
  return body;
}

/**
 * Every listed task at every level under the filter's starting point, depth first, with its depth
 * (0 for the starting level), plus the list's totals: what an export writes.
 */
export async function projectTaskTree(db: Knex, teamId: string, projectId: string, filter: ListFilter) {
  const tree = await projectTree(db, teamId, projectId, filter);
  const rows: { depth: number; row: ReturnType<typeof tree.rowOf> }[] = [];
  const stack = [...tree.listedCandidates].reverse().map((node) => ({ node, depth: 0 }));
  while (stack.length) {
    const { node, depth } = stack.pop() as { node: ListedTask; depth: number };
    rows.push({ depth, row: tree.rowOf(node) });
    for (const child of [...tree.listedChildren(node)].reverse()) stack.push({ node: child, depth: depth + 1 });
  }
  const { id, name, currency } = presentProject(tree.project);
  return { project: { id, name, currency }, rows, totals: tree.totals };
}

/**
 * Rolled-up totals of every node under `candidates`, computed bottom-up without recursion (trees may be
 * deep): a node is listed when it or a descendant passes the filter.
 */
function rollUp(candidates: readonly ListedTask[]): Map<ListedTask, { totals: TaskTotals; listed: boolean }> {
  const result = new Map<ListedTask, { totals: TaskTotals; listed: boolean }>();
  const order: ListedTask[] = [];
  const stack = [...candidates];
  while (stack.length) {
    const node = stack.pop() as ListedTask;
    order.push(node);
    stack.push(...node.children);
  }
  for (const node of order.reverse()) {
    const included: TaskTotals[] = node.passes ? [node.own] : [];
    let listed = node.passes;
    for (const child of node.children) {
      const part = result.get(child);
      if (!part?.listed) continue;
      included.push(part.totals);
      listed = true;
    }
    result.set(node, { totals: included.length === 1 ? (included[0] as TaskTotals) : addTotals(included), listed });
  }
  return result;
}

function presentListSums(all: readonly TaskTotals[]) {
  const totals = addTotals(all);
  return { ...presentTotals(totals), variance: variance(totals) };
}

type GroupableRow = { id: string; status: string | null; priority: string | null; phase: string | null; totalsForSums: TaskTotals };

const NONE_GROUP = 'None';

function groupRows(rows: readonly GroupableRow[], field: 'status' | 'priority' | 'phase') {
  const groups = groupBy(rows, (row) => row[field] ?? NONE_GROUP);
  const rank = (name: string) => (name === NONE_GROUP ? 1 : 0);
  return [...groups.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || compareText(a, b))
    .map(([groupName, members]) => ({
      group_name: groupName,
      task_ids: members.map((row) => row.id),
      ...presentListSums(members.map((row) => row.totalsForSums)),
    }));
}
