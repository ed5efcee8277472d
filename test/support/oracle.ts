import DecimalJs from 'decimal.js';
import type { Knex } from 'knex';
import { now as clockNow } from '../../src/clock';

/*
 * An independent oracle for the finance figures (docs/finance-rules.md): it reads the raw input
 * rows (tasks, assignees, every time log, members, dated project roles, the dated rate card with its
 * bill rates, members' own dated rates, the project's time zone and rate unit) and recomputes a breakdown and a project list in the most straightforward way,
 * with its own rounding, split, log days (Intl, not SQL) and cost lines. It never reads anything the
 * service stores or derives (task_labor, task_member_time, task_member_day_time, project_figures).
 */
const D = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_HALF_UP });
type Dec = DecimalJs;

/*
 * ISO 4217's minor units (list one, the "Minor unit" column), written out here from the standard's
 * table rather than taken from the service's money module: every code in use, the funds codes included
 * (BOV ... UYW), and the ones withdrawn since that Node's ICU still lists (HRK, SLL, ZWL, CUC). The
 * codes without a minor unit ("N.A.": metals, XDR, XSU, XTS, XXX ...) are not money and are absent. A
 * code missing here is an error, never a guess of 2 (test/unit/oracle-currencies.test.ts checks that
 * every code the service accepts is here).
 */
const ISO_4217_BY_DIGITS: Record<0 | 2 | 3 | 4, string> = {
  0: 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF',
  2: `AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD
      CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL
      GHS GIP GMD GTQ GYD HKD HNL HRK HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR
      LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB
      PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP
      SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG ZWL`,
  3: 'BHD IQD JOD KWD LYD OMR TND',
  4: 'CLF UYW',
};
export const ISO_4217_MINOR_UNITS: ReadonlyMap<string, number> = new Map(
  Object.entries(ISO_4217_BY_DIGITS).flatMap(([digits, codes]) => codes.split(/\s+/).map((code) => [code, Number(digits)] as const)),
);

/** The digits of a currency's minor unit by ISO 4217; throws for a code the table does not know. */
export function isoMinorUnit(currency: string): number {
  const digits = ISO_4217_MINOR_UNITS.get(currency);
  if (digits === undefined) throw new Error(`The oracle knows no ISO 4217 minor unit for ${currency}`);
  return digits;
}

const money = (amount: Dec, currency: string) => amount.toDecimalPlaces(isoMinorUnit(currency), D.ROUND_HALF_UP);
const hours = (seconds: number) => new D(seconds).div(3600).toDecimalPlaces(2, D.ROUND_HALF_UP);
const num = (value: Dec) => Number(value.toFixed());

/**
 * Text by Unicode code point, as the rules order names (docs/finance-rules.md): the strings' code points
 * compared one by one (Array.from splits by code point), the shorter first on a tie. JavaScript's `<`
 * compares UTF-16 code units instead, which puts U+1F600 (a surrogate pair, 0xD83D...) before U+FF21.
 */
export function byCodePoint(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

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

type Log = { task_id: string; team_member_id: string; seconds: number; day: string };
type Dated<T> = { effective_from: string; value: T };

/** Log days counted (inclusive, each end optional). */
export type Range = { from?: string; to?: string };

/** A dated rate entry's two rates (null: none). */
type Rates = { cost: string | null; bill: string | null };

type Inputs = {
  projectId: string;
  currency: string;
  project: { id: string; name: string; currency: string; budget: number | null; rate_unit: 'hour' | 'day'; hours_per_day: number };
  /** Hours of a day when rates are per day, else null. */
  perDay: Dec | null;
  /** Whether any entry (card or member) has a bill rate. */
  bills: boolean;
  /** Today in the project's time zone. */
  today: string;
  range: Range;
  tasks: Task[];
  assignees: Map<string, string[]>;
  logs: Log[];
  members: Map<string, { name: string; avatar_url: string | null }>;
  /** Each project member's dated roles, oldest first. */
  rolesOf: Map<string, Dated<string | null>[]>;
  roleName: Map<string, string>;
  /** Each job role's dated rates, oldest first (null: no rate). */
  ratesOf: Map<string, Dated<Rates>[]>;
  /** Each project member's own dated rates, oldest first. */
  overridesOf: Map<string, Dated<Rates>[]>;
};

/** The date of an instant in an IANA time zone, by Intl. */
function dateIn(timeZone: string, at: Date): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

function dated<T>(rows: { key: string; effective_from: string; value: T }[]): Map<string, Dated<T>[]> {
  const out = new Map<string, Dated<T>[]>();
  for (const row of [...rows].sort((a, b) => byCodePoint(a.effective_from, b.effective_from))) {
    out.set(row.key, [...(out.get(row.key) ?? []), { effective_from: row.effective_from, value: row.value }]);
  }
  return out;
}

/**
 * Everything a project's figures depend on, read raw. `today` (YYYY-MM-DD) decides the rates and roles
 * of today; by default it is the service clock's date in the project's time zone. `range` limits the
 * time logs counted.
 */
export async function readInputs(db: Knex, teamId: string, projectId: string, today?: string, range: Range = {}): Promise<Inputs> {
  const project = await db('projects')
    .where({ team_id: teamId, id: projectId })
    .first('id', 'name', 'currency', 'budget', 'time_zone', 'rate_unit', db.raw('hours_per_day::text as hours_per_day'));
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
  const logs: Log[] = (
    await db('time_logs').where({ team_id: teamId }).whereIn('task_id', ids).select('task_id', 'team_member_id', 'seconds', 'logged_at')
  ).map((log: { task_id: string; team_member_id: string; seconds: number; logged_at: Date }) => ({
    task_id: log.task_id,
    team_member_id: log.team_member_id,
    seconds: Number(log.seconds),
    day: dateIn(project.time_zone, new Date(log.logged_at)),
  }));
  const members = new Map<string, { name: string; avatar_url: string | null }>();
  for (const m of await db('team_members').where({ team_id: teamId }).select('id', 'name', 'avatar_url')) members.set(m.id, m);
  const roleRows = await db('project_member_roles')
    .where({ team_id: teamId, project_id: projectId })
    .select('team_member_id', 'job_role_id', db.raw("to_char(effective_from, 'YYYY-MM-DD') as effective_from"));
  const roleName = new Map<string, string>();
  for (const r of await db('job_roles').where({ team_id: teamId }).select('id', 'name')) roleName.set(r.id, r.name);
  type RateRow = { key: string; hourly_rate: string | null; bill_rate: string | null; effective_from: string };
  const rateRows: RateRow[] = await db('project_rate_cards')
    .where({ team_id: teamId, project_id: projectId })
    .select('job_role_id as key', 'hourly_rate', 'bill_rate', db.raw("to_char(effective_from, 'YYYY-MM-DD') as effective_from"));
  const overrideRows: RateRow[] = await db('project_member_rates')
    .where({ team_id: teamId, project_id: projectId })
    .select('team_member_id as key', 'hourly_rate', 'bill_rate', db.raw("to_char(effective_from, 'YYYY-MM-DD') as effective_from"));
  const ratesOfRows = (rows: RateRow[]) =>
    dated(rows.map((r) => ({ key: r.key, effective_from: r.effective_from, value: { cost: r.hourly_rate, bill: r.bill_rate } })));
  return {
    projectId,
    currency: project.currency,
    project: {
      id: project.id,
      name: project.name,
      currency: project.currency,
      budget: project.budget === null ? null : Number(project.budget),
      rate_unit: project.rate_unit,
      hours_per_day: Number(project.hours_per_day),
    },
    perDay: project.rate_unit === 'day' ? new D(project.hours_per_day) : null,
    bills: [...rateRows, ...overrideRows].some((r) => r.bill_rate !== null),
    today: today ?? dateIn(project.time_zone, clockNow()),
    range,
    tasks,
    assignees,
    logs,
    members,
    rolesOf: dated(roleRows.map((r: { team_member_id: string; job_role_id: string | null; effective_from: string }) => ({ key: r.team_member_id, effective_from: r.effective_from, value: r.job_role_id }))),
    roleName,
    ratesOf: ratesOfRows(rateRows),
    overridesOf: ratesOfRows(overrideRows),
  };
}

type Source = 'member' | 'role' | 'none';

type CostLine = {
  job_role: string;
  hourly_rate: Dec;
  bill_rate: Dec;
  logged_hours: Dec;
  actual_cost: Dec;
  actual_revenue: Dec;
  first_day: string;
  last_day: string;
  cost_missing: boolean;
  bill_missing: boolean;
};

type MemberFig = {
  team_member_id: string;
  name: string;
  avatar_url: string | null;
  jobRole: string;
  hourly_rate: Dec;
  bill_rate: Dec;
  cost_rate_source: Source;
  bill_rate_source: Source;
  estimated_hours: Dec;
  logged_hours: Dec;
  estimated_cost: Dec;
  actual_cost: Dec;
  estimated_revenue: Dec;
  actual_revenue: Dec;
  missing_cost: boolean;
  missing_bill: boolean;
  cost_lines: CostLine[];
};

type Own = {
  estimated_hours: Dec;
  logged_hours: Dec;
  estimated_labor_cost: Dec;
  actual_labor_cost: Dec;
  fixed_cost: Dec;
  estimated_revenue: Dec;
  actual_revenue: Dec;
  missing: boolean;
  members: MemberFig[];
};

/** The entry in force on `day`: the latest on or before it (or, with `firstFromBeginning`, the first one before any). */
function inForce<T>(entries: Dated<T>[] | undefined, day: string, firstFromBeginning: boolean): Dated<T> | undefined {
  const list = entries ?? [];
  let found: Dated<T> | undefined;
  for (const entry of list) if (entry.effective_from <= day) found = entry;
  return found ?? (firstFromBeginning ? list[0] : undefined);
}

/**
 * A member's role (id, or null) and its two rates on `day` (section 3b rules 2 and 3; section 8 rule 3:
 * each rate the member's own entry if not null, else its role's if not null, else 0 from "none").
 */
function roleAndRateOn(inputs: Inputs, memberId: string, day: string) {
  const role = inForce(inputs.rolesOf.get(memberId), day, true)?.value ?? null;
  const roleRates = role === null ? undefined : inForce(inputs.ratesOf.get(role), day, false)?.value;
  const own = inForce(inputs.overridesOf.get(memberId), day, false)?.value;
  const resolve = (kind: keyof Rates): { value: Dec; source: Source } => {
    if (own && own[kind] !== null) return { value: new D(own[kind] as string), source: 'member' };
    if (roleRates && roleRates[kind] !== null) return { value: new D(roleRates[kind] as string), source: 'role' };
    return { value: new D(0), source: 'none' };
  };
  const cost = resolve('cost');
  const bill = resolve('bill');
  return {
    roleId: role,
    jobRole: role === null ? 'Unassigned' : (inputs.roleName.get(role) as string),
    rate: cost.value,
    costSource: cost.source,
    bill: bill.value,
    billSource: bill.source,
  };
}

/** What `hours` (rounded) cost at `rate` (section 8 rule 4: per day in a "day" project, one rounding). */
function amount(inputs: Inputs, hoursWorked: Dec, rate: Dec): Dec {
  return money(inputs.perDay === null ? hoursWorked.times(rate) : hoursWorked.times(rate).div(inputs.perDay), inputs.currency);
}

function roleAndRate(inputs: Inputs, memberId: string) {
  return roleAndRateOn(inputs, memberId, inputs.today);
}

const memberOrder = (a: { name: string; team_member_id: string }, b: { name: string; team_member_id: string }) =>
  byCodePoint(a.name, b.name) || byCodePoint(a.team_member_id, b.team_member_id);

const lineOrder = (a: CostLine, b: CostLine) =>
  byCodePoint(a.first_day, b.first_day) || byCodePoint(a.job_role, b.job_role) || a.hourly_rate.comparedTo(b.hourly_rate) || a.bill_rate.comparedTo(b.bill_rate);

const inRange = (range: Range, day: string) => (range.from === undefined || day >= range.from) && (range.to === undefined || day <= range.to);

/**
 * Section 3b rule 4 and section 8 rule 7: a member's logs on a task in the range, grouped by the (role,
 * cost rate, bill rate) of each log's day; revenue only on a billable task.
 */
function costLines(inputs: Inputs, task: Task, memberId: string): CostLine[] {
  type Group = { job_role: string; rate: Dec; bill: Dec; seconds: number; first: string; last: string; costMissing: boolean; billMissing: boolean };
  const groups = new Map<string, Group>();
  for (const log of inputs.logs) {
    if (log.task_id !== task.id || log.team_member_id !== memberId || !inRange(inputs.range, log.day)) continue;
    const on = roleAndRateOn(inputs, memberId, log.day);
    const key = `${on.roleId}|${on.rate.toFixed()}|${on.bill.toFixed()}`;
    const group = groups.get(key) ?? { job_role: on.jobRole, rate: on.rate, bill: on.bill, seconds: 0, first: log.day, last: log.day, costMissing: false, billMissing: false };
    group.seconds += log.seconds;
    if (log.day < group.first) group.first = log.day;
    if (log.day > group.last) group.last = log.day;
    if (on.costSource === 'none') group.costMissing = true;
    if (on.billSource === 'none') group.billMissing = true;
    groups.set(key, group);
  }
  return [...groups.values()]
    .filter((g) => g.seconds > 0)
    .map((g) => {
      const logged = hours(g.seconds);
      return {
        job_role: g.job_role,
        hourly_rate: g.rate,
        bill_rate: g.bill,
        logged_hours: logged,
        actual_cost: amount(inputs, logged, g.rate),
        actual_revenue: task.billable ? amount(inputs, logged, g.bill) : new D(0),
        first_day: g.first,
        last_day: g.last,
        cost_missing: g.costMissing,
        bill_missing: g.billMissing,
      };
    })
    .sort(lineOrder);
}

/** Rules 1-6 and 8 for one task, with section 3b's cost lines. */
function ownFigures(inputs: Inputs, task: Task): Own {
  const assigned = inputs.assignees.get(task.id) ?? [];
  const loggers = inputs.logs.filter((log) => log.task_id === task.id && log.seconds > 0).map((log) => log.team_member_id);
  const ids = new Set([...assigned, ...loggers]);
  const people = [...ids].map((id) => ({ team_member_id: id, name: inputs.members.get(id)?.name as string })).sort(memberOrder);
  const assignedSorted = people.filter((p) => assigned.includes(p.team_member_id));
  // Rule 2 by hand: hundredths, the left-over ones to the first assignees.
  const hundredths = new D(task.estimated_hours).times(100).toNumber();
  const base = assignedSorted.length ? Math.floor(hundredths / assignedSorted.length) : 0;
  const extra = assignedSorted.length ? hundredths - base * assignedSorted.length : 0;
  const shareOf = new Map(assignedSorted.map((p, i) => [p.team_member_id, new D(base + (i < extra ? 1 : 0)).div(100)]));
  const billsHere = inputs.bills && task.billable;
  const members = people.map((p): MemberFig => {
    const today = roleAndRate(inputs, p.team_member_id);
    const estimated = shareOf.get(p.team_member_id) ?? new D(0);
    const lines = costLines(inputs, task, p.team_member_id);
    const hasEstimate = estimated.gt(0);
    return {
      team_member_id: p.team_member_id,
      name: p.name,
      avatar_url: inputs.members.get(p.team_member_id)?.avatar_url ?? null,
      jobRole: today.jobRole,
      hourly_rate: today.rate,
      bill_rate: today.bill,
      cost_rate_source: today.costSource,
      bill_rate_source: today.billSource,
      estimated_hours: estimated,
      logged_hours: lines.reduce((s, l) => s.plus(l.logged_hours), new D(0)),
      estimated_cost: amount(inputs, estimated, today.rate),
      actual_cost: lines.reduce((s, l) => s.plus(l.actual_cost), new D(0)),
      estimated_revenue: task.billable ? amount(inputs, estimated, today.bill) : new D(0),
      actual_revenue: lines.reduce((s, l) => s.plus(l.actual_revenue), new D(0)),
      // Section 8 rule 8: a rate that resolves to none on a day that counts (today for an estimate, each logged day).
      missing_cost: (hasEstimate && today.costSource === 'none') || lines.some((l) => l.cost_missing),
      missing_bill: billsHere && ((hasEstimate && today.billSource === 'none') || lines.some((l) => l.bill_missing)),
      cost_lines: lines,
    };
  });
  const add = (f: (m: MemberFig) => Dec) => members.reduce((s, m) => s.plus(f(m)), new D(0));
  return {
    estimated_hours: new D(task.estimated_hours),
    logged_hours: add((m) => m.logged_hours),
    estimated_labor_cost: add((m) => m.estimated_cost),
    actual_labor_cost: add((m) => m.actual_cost),
    fixed_cost: new D(task.fixed_cost),
    estimated_revenue: add((m) => m.estimated_revenue),
    actual_revenue: add((m) => m.actual_revenue),
    missing: members.some((m) => m.missing_cost || m.missing_bill),
    members,
  };
}

/** A member's lines over several tasks: one line per (role, rate), hours and costs added, the widest days. */
function mergeLines(lines: CostLine[]): CostLine[] {
  const merged = new Map<string, CostLine>();
  for (const line of lines) {
    const key = `${line.job_role}|${line.hourly_rate.toFixed()}|${line.bill_rate.toFixed()}`;
    const seen = merged.get(key);
    if (!seen) merged.set(key, { ...line });
    else {
      seen.logged_hours = seen.logged_hours.plus(line.logged_hours);
      seen.actual_cost = seen.actual_cost.plus(line.actual_cost);
      seen.actual_revenue = seen.actual_revenue.plus(line.actual_revenue);
      if (line.first_day < seen.first_day) seen.first_day = line.first_day;
      if (line.last_day > seen.last_day) seen.last_day = line.last_day;
    }
  }
  return [...merged.values()].sort(lineOrder);
}

function descendants(inputs: Inputs, id: string): Task[] {
  const out: Task[] = [];
  for (const child of inputs.tasks.filter((t) => t.parent_task_id === id)) out.push(child, ...descendants(inputs, child.id));
  return out;
}

/** Rates as shown: in a "day" project the entered ones as day_rate / day_bill_rate, the hourly ones divided, 4 decimals. */
function shownRates(inputs: Inputs, cost: Dec, bill: Dec) {
  if (inputs.perDay === null) return { hourly_rate: num(cost), bill_rate: num(bill) };
  const perHour = (rate: Dec) => num(rate.div(inputs.perDay as Dec).toDecimalPlaces(4, D.ROUND_HALF_UP));
  return { hourly_rate: perHour(cost), day_rate: num(cost), bill_rate: perHour(bill), day_bill_rate: num(bill) };
}

function presentMember(inputs: Inputs, m: MemberFig) {
  return {
    team_member_id: m.team_member_id,
    name: m.name,
    avatar_url: m.avatar_url,
    ...shownRates(inputs, m.hourly_rate, m.bill_rate),
    estimated_hours: num(m.estimated_hours),
    logged_hours: num(m.logged_hours),
    estimated_cost: num(m.estimated_cost),
    actual_cost: num(m.actual_cost),
    estimated_revenue: num(m.estimated_revenue),
    actual_revenue: num(m.actual_revenue),
    cost_rate_source: m.cost_rate_source,
    bill_rate_source: m.bill_rate_source,
    cost_lines: m.cost_lines.map((l) => ({
      job_role: l.job_role,
      ...shownRates(inputs, l.hourly_rate, l.bill_rate),
      logged_hours: num(l.logged_hours),
      actual_cost: num(l.actual_cost),
      actual_revenue: num(l.actual_revenue),
      first_day: l.first_day,
      last_day: l.last_day,
    })),
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
      seen.estimated_revenue = seen.estimated_revenue.plus(m.estimated_revenue);
      seen.actual_revenue = seen.actual_revenue.plus(m.actual_revenue);
      seen.missing_cost = seen.missing_cost || m.missing_cost;
      seen.missing_bill = seen.missing_bill || m.missing_bill;
      seen.cost_lines = [...seen.cost_lines, ...m.cost_lines];
    }
  }
  const members = [...merged.values()].map((m) => ({ ...m, cost_lines: mergeLines(m.cost_lines) })).sort(memberOrder);
  const total = (f: (o: Own) => Dec) => owns.reduce((s, o) => s.plus(f(o)), new D(0));
  const estLabor = total((o) => o.estimated_labor_cost);
  const actLabor = total((o) => o.actual_labor_cost);
  const fixed = total((o) => o.fixed_cost);
  const estRevenue = total((o) => o.estimated_revenue);
  const actRevenue = total((o) => o.actual_revenue);
  const roles = [...new Set(members.map((m) => m.jobRole))].sort((a, b) => (a === 'Unassigned' ? 1 : 0) - (b === 'Unassigned' ? 1 : 0) || byCodePoint(a, b));
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
      estimated_revenue: num(estRevenue),
      actual_revenue: num(actRevenue),
      estimated_margin: num(estRevenue.minus(estLabor.plus(fixed))),
      actual_margin: num(actRevenue.minus(actLabor.plus(fixed))),
      has_missing_rates: owns.some((o) => o.missing),
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
        estimated_revenue: add((m) => m.estimated_revenue),
        actual_revenue: add((m) => m.actual_revenue),
        members: group.map((m) => presentMember(inputs, m)),
      };
    }),
    members: members.map((m) => ({ ...presentMember(inputs, m), job_title_name: m.jobRole })),
    warnings: members.flatMap((m) => [
      ...(m.missing_cost ? [{ code: 'MISSING_COST_RATE', team_member_id: m.team_member_id, name: m.name }] : []),
      ...(m.missing_bill ? [{ code: 'MISSING_BILL_RATE', team_member_id: m.team_member_id, name: m.name }] : []),
    ]),
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
      const estRevenue = total((o) => o.estimated_revenue);
      const actRevenue = total((o) => o.actual_revenue);
      const assignees = (inputs.assignees.get(t.id) ?? [])
        .map((id) => ({ team_member_id: id, name: inputs.members.get(id)?.name as string }))
        .sort(memberOrder)
        .map(({ team_member_id }) => {
          const { jobRole, rate } = roleAndRate(inputs, team_member_id);
          const member = inputs.members.get(team_member_id) as { name: string; avatar_url: string | null };
          const shown = inputs.perDay === null ? rate : rate.div(inputs.perDay).toDecimalPlaces(4, D.ROUND_HALF_UP);
          return { team_member_id, name: member.name, avatar_url: member.avatar_url, job_title_name: jobRole, hourly_rate: num(shown) };
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
        estimated_revenue: estRevenue,
        actual_revenue: actRevenue,
        estimated_margin: estRevenue.minus(estLabor.plus(fixed)),
        actual_margin: actRevenue.minus(actLabor.plus(fixed)),
        has_missing_rates: owns.some((o) => o.missing),
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
    'total_estimated_cost', 'total_actual_cost', 'estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin', 'variance'] as const;
  const totals = {
    ...Object.fromEntries(FIGURES.map((f) => [f, num(rows.reduce((s, r) => s.plus(r[f]), new D(0)))])),
    has_missing_rates: rows.some((r) => r.has_missing_rates),
  };
  return {
    project: inputs.project,
    tasks: rows.map((r) => ({ ...r, ...Object.fromEntries(FIGURES.map((f) => [f, num(r[f])])) })),
    totals,
  };
}
