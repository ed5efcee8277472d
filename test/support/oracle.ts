import DecimalJs from 'decimal.js';
import type { Knex } from 'knex';

/*
 * An independent oracle for the finance figures (CONTRACT sections 3 and 4): it reads the raw input
 * rows (tasks, assignees, every time log, members, project roles, the rate card) and recomputes a
 * breakdown and a project list in the most straightforward way, with its own rounding and split. It
 * never reads anything the service stores or derives (task_labor, task_member_time, project_figures).
 */
const D = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_HALF_UP });
type Dec = DecimalJs;

const MINOR_UNITS: Record<string, number> = { JPY: 0, KRW: 0, KWD: 3, BHD: 3 };
const money = (amount: Dec, currency: string) => amount.toDecimalPlaces(MINOR_UNITS[currency] ?? 2, D.ROUND_HALF_UP);
const num = (value: Dec) => Number(value.toFixed());
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

type Task = {
  id: string;
  name: string;
  parent_task_id: string | null;
  billable: boolean;
  estimated_hours: string;
  fixed_cost: string;
  status: string | null;
  priority: string | null;
  phase: string | null;
};

type Inputs = {
  projectId: string;
  currency: string;
  project: { id: string; name: string; currency: string; budget: number | null };
  tasks: Task[];
  assignees: Map<string, string[]>;
  seconds: Map<string, Map<string, number>>;
  members: Map<string, { name: string; avatar_url: string | null }>;
  roleOf: Map<string, string | null>;
  roleName: Map<string, string>;
  rateOf: Map<string, Dec>;
};

/** Everything a project's figures depend on, read raw; `today` decides the rates in force. */
export async function readInputs(db: Knex, teamId: string, projectId: string, today: string): Promise<Inputs> {
  const project = await db('projects').where({ team_id: teamId, id: projectId }).first('id', 'name', 'currency', 'budget');
  const tasks: (Task & { created_at: Date })[] = await db('tasks')
    .where({ team_id: teamId, project_id: projectId })
    .whereNull('archived_at')
    .select('id', 'name', 'parent_task_id', 'billable', 'estimated_hours', 'fixed_cost', 'status', 'priority', 'phase', 'created_at')
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  const ids = tasks.map((t) => t.id);
  const assignees = new Map<string, string[]>();
  for (const row of await db('task_assignees').where({ team_id: teamId }).whereIn('task_id', ids).select('task_id', 'team_member_id')) {
    assignees.set(row.task_id, [...(assignees.get(row.task_id) ?? []), row.team_member_id]);
  }
  const seconds = new Map<string, Map<string, number>>();
  for (const log of await db('time_logs').where({ team_id: teamId }).whereIn('task_id', ids).select('task_id', 'team_member_id', 'seconds')) {
    const perMember = seconds.get(log.task_id) ?? new Map<string, number>();
    perMember.set(log.team_member_id, (perMember.get(log.team_member_id) ?? 0) + Number(log.seconds));
    seconds.set(log.task_id, perMember);
  }
  const members = new Map<string, { name: string; avatar_url: string | null }>();
  for (const m of await db('team_members').where({ team_id: teamId }).select('id', 'name', 'avatar_url')) members.set(m.id, m);
  const roleOf = new Map<string, string | null>();
  for (const pm of await db('project_members').where({ team_id: teamId, project_id: projectId }).select('team_member_id', 'job_role_id')) {
    roleOf.set(pm.team_member_id, pm.job_role_id);
  }
  const roleName = new Map<string, string>();
  for (const r of await db('job_roles').where({ team_id: teamId }).select('id', 'name')) roleName.set(r.id, r.name);
  // The rate of a role on `today`: its entry with the latest effective_from on or before today.
  const rateOf = new Map<string, Dec>();
  const entries: { job_role_id: string; effective_from: string; hourly_rate: string }[] = await db('project_rate_cards')
    .where({ team_id: teamId, project_id: projectId })
    .select('job_role_id', db.raw('to_char(effective_from, \'YYYY-MM-DD\') as effective_from'), 'hourly_rate');
  const latest = new Map<string, string>();
  for (const e of entries) {
    if (e.effective_from > today) continue;
    if ((latest.get(e.job_role_id) ?? '') < e.effective_from) {
      latest.set(e.job_role_id, e.effective_from);
      rateOf.set(e.job_role_id, new D(e.hourly_rate));
    }
  }
  return {
    projectId,
    currency: project.currency,
    project: { id: project.id, name: project.name, currency: project.currency, budget: project.budget === null ? null : Number(project.budget) },
    tasks,
    assignees,
    seconds,
    members,
    roleOf,
    roleName,
    rateOf,
  };
}

type MemberFig = {
  team_member_id: string;
  name: string;
  avatar_url: string | null;
  jobRole: string;
  hourly_rate: Dec;
  estimated_hours: Dec;
  logged_hours: Dec;
  estimated_cost: Dec;
  actual_cost: Dec;
};

type Own = { estimated_hours: Dec; logged_hours: Dec; estimated_labor_cost: Dec; actual_labor_cost: Dec; fixed_cost: Dec; members: MemberFig[] };

function roleAndRate(inputs: Inputs, memberId: string) {
  const role = inputs.roleOf.get(memberId) ?? null;
  return {
    jobRole: role === null ? 'Unassigned' : (inputs.roleName.get(role) as string),
    rate: role === null ? new D(0) : (inputs.rateOf.get(role) ?? new D(0)),
  };
}

const memberOrder = (a: { name: string; team_member_id: string }, b: { name: string; team_member_id: string }) =>
  byText(a.name, b.name) || byText(a.team_member_id, b.team_member_id);

/** Rules 1-6 and 8 for one task. */
function ownFigures(inputs: Inputs, task: Task): Own {
  const assigned = inputs.assignees.get(task.id) ?? [];
  const logged = inputs.seconds.get(task.id) ?? new Map<string, number>();
  const ids = new Set([...assigned, ...[...logged.entries()].filter(([, s]) => s > 0).map(([id]) => id)]);
  const people = [...ids].map((id) => ({ team_member_id: id, name: inputs.members.get(id)?.name as string })).sort(memberOrder);
  const assignedSorted = people.filter((p) => assigned.includes(p.team_member_id));
  // Rule 2 by hand: hundredths, the left-over ones to the first assignees.
  const hundredths = new D(task.estimated_hours).times(100).toNumber();
  const base = assignedSorted.length ? Math.floor(hundredths / assignedSorted.length) : 0;
  const extra = assignedSorted.length ? hundredths - base * assignedSorted.length : 0;
  const shareOf = new Map(assignedSorted.map((p, i) => [p.team_member_id, new D(base + (i < extra ? 1 : 0)).div(100)]));
  const members = people.map((p): MemberFig => {
    const { jobRole, rate } = roleAndRate(inputs, p.team_member_id);
    const estimated = shareOf.get(p.team_member_id) ?? new D(0);
    const hours = new D(logged.get(p.team_member_id) ?? 0).div(3600).toDecimalPlaces(2, D.ROUND_HALF_UP);
    return {
      team_member_id: p.team_member_id,
      name: p.name,
      avatar_url: inputs.members.get(p.team_member_id)?.avatar_url ?? null,
      jobRole,
      hourly_rate: rate,
      estimated_hours: estimated,
      logged_hours: hours,
      estimated_cost: money(estimated.times(rate), inputs.currency),
      actual_cost: money(hours.times(rate), inputs.currency),
    };
  });
  const add = (f: (m: MemberFig) => Dec) => members.reduce((s, m) => s.plus(f(m)), new D(0));
  return {
    estimated_hours: new D(task.estimated_hours),
    logged_hours: add((m) => m.logged_hours),
    estimated_labor_cost: add((m) => m.estimated_cost),
    actual_labor_cost: add((m) => m.actual_cost),
    fixed_cost: new D(task.fixed_cost),
    members,
  };
}

function descendants(inputs: Inputs, id: string): Task[] {
  const out: Task[] = [];
  for (const child of inputs.tasks.filter((t) => t.parent_task_id === id)) out.push(child, ...descendants(inputs, child.id));
  return out;
}

function presentMember(m: MemberFig) {
  return {
    team_member_id: m.team_member_id,
    name: m.name,
    avatar_url: m.avatar_url,
    hourly_rate: num(m.hourly_rate),
    estimated_hours: num(m.estimated_hours),
    logged_hours: num(m.logged_hours),
    estimated_cost: num(m.estimated_cost),
    actual_cost: num(m.actual_cost),
  };
}

/** A breakdown's body as the contract defines it. */
export function oracleBreakdown(inputs: Inputs, taskId: string, includeSubtasks: boolean) {
  const task = inputs.tasks.find((t) => t.id === taskId) as Task;
  const scope = includeSubtasks ? [task, ...descendants(inputs, taskId)] : [task];
  const owns = scope.map((t) => ownFigures(inputs, t));
  const merged = new Map<string, MemberFig>();
  for (const m of owns.flatMap((o) => o.members)) {
    const seen = merged.get(m.team_member_id);
    if (!seen) merged.set(m.team_member_id, { ...m });
    else {
      seen.estimated_hours = seen.estimated_hours.plus(m.estimated_hours);
      seen.logged_hours = seen.logged_hours.plus(m.logged_hours);
      seen.estimated_cost = seen.estimated_cost.plus(m.estimated_cost);
      seen.actual_cost = seen.actual_cost.plus(m.actual_cost);
    }
  }
  const members = [...merged.values()].sort(memberOrder);
  const total = (f: (o: Own) => Dec) => owns.reduce((s, o) => s.plus(f(o)), new D(0));
  const estLabor = total((o) => o.estimated_labor_cost);
  const actLabor = total((o) => o.actual_labor_cost);
  const fixed = total((o) => o.fixed_cost);
  const roles = [...new Set(members.map((m) => m.jobRole))].sort((a, b) => (a === 'Unassigned' ? 1 : 0) - (b === 'Unassigned' ? 1 : 0) || byText(a, b));
  return {
    task: {
      id: task.id,
      name: task.name,
      project_id: inputs.projectId,
      billable: task.billable,
      currency: inputs.currency,
      estimated_hours: num(total((o) => o.estimated_hours)),
      logged_hours: num(total((o) => o.logged_hours)),
      estimated_labor_cost: num(estLabor),
      actual_labor_cost: num(actLabor),
      fixed_cost: num(fixed),
      total_estimated_cost: num(estLabor.plus(fixed)),
      total_actual_cost: num(actLabor.plus(fixed)),
    },
    grouped_members: roles.map((jobRole) => {
      const group = members.filter((m) => m.jobRole === jobRole);
      const add = (f: (m: MemberFig) => Dec) => num(group.reduce((s, m) => s.plus(f(m)), new D(0)));
      return {
        jobRole,
        estimated_hours: add((m) => m.estimated_hours),
        logged_hours: add((m) => m.logged_hours),
        estimated_cost: add((m) => m.estimated_cost),
        actual_cost: add((m) => m.actual_cost),
        members: group.map(presentMember),
      };
    }),
    members: members.map((m) => ({ ...presentMember(m), job_title_name: m.jobRole })),
  };
}

export type Filter = 'all' | 'billable' | 'non-billable';

/** A project list's body (without groups) as the contract defines it. */
export function oracleList(inputs: Inputs, filter: Filter, parentId: string | null = null) {
  const passes = (t: Task) => filter === 'all' || (filter === 'billable') === t.billable;
  const subtreeOf = (t: Task) => [t, ...descendants(inputs, t.id)].filter(passes);
  const listed = (t: Task) => subtreeOf(t).length > 0;
  const rows = inputs.tasks
    .filter((t) => t.parent_task_id === parentId && listed(t))
    .map((t) => {
      const owns = subtreeOf(t).map((x) => ownFigures(inputs, x));
      const total = (f: (o: Own) => Dec) => owns.reduce((s, o) => s.plus(f(o)), new D(0));
      const estLabor = total((o) => o.estimated_labor_cost);
      const actLabor = total((o) => o.actual_labor_cost);
      const fixed = total((o) => o.fixed_cost);
      const assignees = (inputs.assignees.get(t.id) ?? [])
        .map((id) => ({ team_member_id: id, name: inputs.members.get(id)?.name as string }))
        .sort(memberOrder)
        .map(({ team_member_id }) => {
          const { jobRole, rate } = roleAndRate(inputs, team_member_id);
          const member = inputs.members.get(team_member_id) as { name: string; avatar_url: string | null };
          return { team_member_id, name: member.name, avatar_url: member.avatar_url, job_title_name: jobRole, hourly_rate: num(rate) };
        });
      return {
        id: t.id,
        name: t.name,
        project_id: inputs.projectId,
        billable: t.billable,
        currency: inputs.currency,
        estimated_hours: total((o) => o.estimated_hours),
        logged_hours: total((o) => o.logged_hours),
        estimated_labor_cost: estLabor,
        actual_labor_cost: actLabor,
        fixed_cost: fixed,
        total_estimated_cost: estLabor.plus(fixed),
        total_actual_cost: actLabor.plus(fixed),
        parent_task_id: t.parent_task_id,
        sub_tasks_count: inputs.tasks.filter((c) => c.parent_task_id === t.id && listed(c)).length,
        variance: estLabor.minus(actLabor),
        status: t.status,
        priority: t.priority,
        phase: t.phase,
        assignees,
      };
    });
  const FIGURES = ['estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost',
    'total_estimated_cost', 'total_actual_cost', 'variance'] as const;
  const totals = Object.fromEntries(FIGURES.map((f) => [f, num(rows.reduce((s, r) => s.plus(r[f]), new D(0)))]));
  return {
    project: inputs.project,
    tasks: rows.map((r) => ({ ...r, ...Object.fromEntries(FIGURES.map((f) => [f, num(r[f])])) })),
    totals,
  };
}
