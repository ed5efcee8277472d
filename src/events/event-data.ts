import { toDecimal } from '../finance/rules/money';

/*
 * The `data` of each event type, built from what the write has at hand (docs/webhooks.md lists the
 * fields). Amounts and hours are exact decimals (written as exact JSON numbers by src/json.ts).
 */

type TimeLog = { id: string; task_id: string; team_member_id: string; seconds: number; logged_at: Date | string };

/** time_log.created / time_log.deleted */
export function timeLogEvent(log: TimeLog, projectId: string) {
  return {
    time_log_id: log.id,
    project_id: projectId,
    task_id: log.task_id,
    team_member_id: log.team_member_id,
    seconds: log.seconds,
    logged_at: log.logged_at,
  };
}

/** task.fixed_cost.changed */
export function fixedCostEvent(task: { id: string; project_id: string }, oldValue: string, newValue: string, changedBy: string) {
  return { task_id: task.id, project_id: task.project_id, old_value: toDecimal(oldValue), new_value: toDecimal(newValue), changed_by: changedBy };
}

/** What task.changed follows of a task: the inputs of its finance figures. */
type TaskInputs = {
  id: string;
  project_id: string;
  estimated_hours: unknown;
  billable: boolean;
  parent_task_id: string | null;
  assignee_ids: string[];
};

const FOLLOWED = ['estimated_hours', 'billable', 'parent_task_id', 'assignee_ids'] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * task.changed for a task created (no `before`) or changed: undefined when none of its finance inputs
 * (estimate, billable, parent, assignees) changed, e.g. a rename.
 */
export function taskChangedEvent(before: TaskInputs | undefined, after: TaskInputs) {
  const changed = FOLLOWED.filter((field) => !before || !same(before[field], after[field]));
  if (changed.length === 0) return undefined;
  return {
    task_id: after.id,
    project_id: after.project_id,
    action: before ? 'updated' : 'created',
    changed,
    task: Object.fromEntries(FOLLOWED.map((field) => [field, after[field]])),
  };
}

/** task.changed for an archive: the task and its descendants archived with it. */
export function taskArchivedEvent(task: { id: string; project_id: string }, archivedTasks: number) {
  return { task_id: task.id, project_id: task.project_id, action: 'archived', changed: ['archived'], archived_tasks: archivedTasks };
}

type ProjectInputs = {
  id: string;
  name: string;
  currency: string;
  budget: string | null;
  time_zone: string;
  rate_unit: string;
  hours_per_day: string;
  hours_budget: string | null;
  budget_period: string;
  budget_alerts: number[];
};
const PROJECT_FIELDS = ['name', 'currency', 'budget', 'time_zone', 'rate_unit', 'hours_per_day', 'hours_budget', 'budget_period', 'budget_alerts'] as const;

/** project.changed for a project created (no `before`) or changed, with the fields that changed (undefined: none did). */
export function projectChangedEvent(before: ProjectInputs | undefined, after: ProjectInputs) {
  const changed = PROJECT_FIELDS.filter((field) => !before || String(before[field]) !== String(after[field]));
  if (changed.length === 0) return undefined;
  const decimal = (value: string | null) => (value === null ? null : toDecimal(value));
  return {
    project_id: after.id,
    action: before ? 'updated' : 'created',
    changed,
    project: {
      name: after.name,
      currency: after.currency,
      budget: decimal(after.budget),
      time_zone: after.time_zone,
      rate_unit: after.rate_unit,
      hours_per_day: toDecimal(after.hours_per_day),
      hours_budget: decimal(after.hours_budget),
      budget_period: after.budget_period,
      budget_alerts: after.budget_alerts,
    },
  };
}

/** rate_card.changed: the card written from `effective_from` on, and the roles whose rate on some day from it on changed. */
const rateOrNull = (rate: number | string | null) => (rate === null ? null : toDecimal(rate));

export function rateCardEvent(
  projectId: string,
  effectiveFrom: string,
  roles: readonly { job_role_id: string; hourly_rate: string | null; bill_rate: string | null }[],
  changedRoleIds: readonly string[],
) {
  return {
    project_id: projectId,
    effective_from: effectiveFrom,
    roles: roles.map((entry) => ({ job_role_id: entry.job_role_id, hourly_rate: rateOrNull(entry.hourly_rate), bill_rate: rateOrNull(entry.bill_rate) })),
    changed_job_role_ids: changedRoleIds,
  };
}

/** member_role.changed: a member's role in a project set from a day on (added: new to the project), or the member removed. */
export function memberRoleEvent(
  projectId: string,
  memberId: string,
  change: { job_role_id: string | null; effective_from: string; added: boolean } | { removed: true },
) {
  return { project_id: projectId, team_member_id: memberId, ...change };
}

/** member_rates.changed: a member's own rates in a project written from `effective_from` on (null: its role's rate). */
export function memberRatesEvent(
  projectId: string,
  memberId: string,
  change: { effective_from: string; hourly_rate: string | null; bill_rate: string | null },
) {
  return {
    project_id: projectId,
    team_member_id: memberId,
    effective_from: change.effective_from,
    hourly_rate: rateOrNull(change.hourly_rate),
    bill_rate: rateOrNull(change.bill_rate),
  };
}
