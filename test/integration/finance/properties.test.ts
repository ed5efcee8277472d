import fc from 'fast-check';
import Decimal from 'decimal.js';
import { Harness, startHarness } from '../../support/harness';
import {
  TaskSummary,
  addToProject,
  breakdown,
  createJobRole,
  createMember,
  createProject,
  createTask,
  logTime,
  setRateCard,
} from '../../support/fixtures';
import { refreshProjectLabor } from '../../../src/finance/read-model/freshness';
import { isoMinorUnit } from '../../support/oracle';
import { expectProjectMatchesOracle } from '../figures/check';

/*
 * Random projects built through the API (random trees up to three levels below the top, assignees,
 * rates, logs, fixed costs, billable flags), then checked through the API:
 *   - without a filter, every row equals its breakdown (with subtasks when it has any);
 *   - with a filter, every row equals the sum of the plain breakdowns of the passing tasks in its subtree;
 *   - totals and groups are exact sums, and groups partition the listed tasks;
 *   - a task's breakdown read from its stored row equals the one the calculator computes at read time;
 *   - every breakdown and list equals the independent oracle's (test/support/oracle.ts).
 * Currencies of 0, 2, 3 and 4 decimals; half-hours (1800 s) and 18 s (0.005 h) logged, half-hour estimates
 * and rates of an odd last minor digit, so costs and hours often land exactly on a half to be rounded.
 * Every list is read once before the changes too, so a list served from the cache after a change would
 * be caught stale.
 */
// About a minute of work on a quiet machine, waiting on no timer: the bound only stops a hung run, so it
// leaves room for a machine many times slower.
jest.setTimeout(30 * 60_000);

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const SUMMED = [
  'estimated_hours', 'logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'fixed_cost', 'total_estimated_cost', 'total_actual_cost',
  'estimated_revenue', 'actual_revenue', 'estimated_margin', 'actual_margin',
] as const;
/** A figure (hours or money of up to 4 decimals) in whole ten-thousandths, without binary rounding. */
const cents = (v: number) => new Decimal(String(v)).times(10_000).toNumber();
/** Seconds logged: any, or ones that land on half a unit (0.5 h: half a minor unit at an odd rate; 0.005 h). */
const seconds = fc.oneof(fc.integer({ min: 1, max: 30000 }), fc.constantFrom(1800, 5400, 18));
/** Estimates in hundredths of an hour: any, or half-hours. */
const hundredths = fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.constantFrom(50, 150));

const modelArb = fc.record({
  currency: fc.constantFrom('USD', 'JPY', 'KWD', 'CLF'),
  rates: fc.array(fc.option(fc.integer({ min: 0, max: 25000 }), { nil: null }), { minLength: 1, maxLength: 3 }),
  // Section 8: the roles' bill rates (by index, as `rates`), the project's unit, and members' own rates.
  bills: fc.array(fc.option(fc.integer({ min: 0, max: 40000 }), { nil: null }), { maxLength: 3 }),
  perDay: fc.constantFrom(null, '8', '7.5'),
  members: fc.array(
    fc.record({
      role: fc.nat(3),
      inProject: fc.boolean(),
      own: fc.option(
        fc.record({
          cost: fc.option(fc.integer({ min: 0, max: 25000 }), { nil: null }),
          bill: fc.option(fc.integer({ min: 0, max: 40000 }), { nil: null }),
          // In force for the logs (made today) or not yet.
          from: fc.constantFrom('1970-01-01', '2999-01-01'),
        }),
        { nil: null },
      ),
    }),
    { minLength: 1, maxLength: 5 },
  ),
  tasks: fc.array(
    fc.record({
      parent: fc.option(fc.nat(20), { nil: null }),
      hundredths,
      fixedCents: fc.integer({ min: 0, max: 500000 }),
      billable: fc.boolean(),
      assignees: fc.array(fc.nat(4), { maxLength: 4 }),
      logs: fc.array(fc.record({ member: fc.nat(4), seconds }), { maxLength: 4 }),
      status: fc.constantFrom('todo', 'doing', null),
      archived: fc.boolean(),
    }),
    { minLength: 1, maxLength: 9 },
  ),
  // Changes after the build, one per path that must refresh stored figures.
  changes: fc.array(
    fc.oneof(
      fc.record({ kind: fc.constant('rate' as const), role: fc.nat(3), rate: fc.option(fc.integer({ min: 0, max: 25000 }), { nil: null }) }),
      fc.record({ kind: fc.constant('role' as const), member: fc.nat(4), role: fc.nat(4) }),
      fc.record({ kind: fc.constant('rename' as const), member: fc.nat(4), name: fc.nat(4) }),
      fc.record({ kind: fc.constant('estimate' as const), task: fc.nat(8), hundredths }),
      fc.record({ kind: fc.constant('assignees' as const), task: fc.nat(8), members: fc.array(fc.nat(4), { maxLength: 3 }) }),
      fc.record({ kind: fc.constant('log' as const), task: fc.nat(8), member: fc.nat(4), seconds }),
      fc.record({ kind: fc.constant('unlog' as const), log: fc.nat(40) }),
      fc.record({ kind: fc.constant('fixed' as const), task: fc.nat(8), fixedCents: fc.integer({ min: 0, max: 500000 }) }),
      fc.record({ kind: fc.constant('billable' as const), task: fc.nat(8) }),
      fc.record({ kind: fc.constant('move' as const), task: fc.nat(8), parent: fc.option(fc.nat(8), { nil: null }) }),
      fc.record({ kind: fc.constant('avatar' as const), member: fc.nat(4), avatar: fc.option(fc.nat(3), { nil: null }) }),
      fc.record({ kind: fc.constant('archive' as const), task: fc.nat(8) }),
      fc.record({
        kind: fc.constant('relabel' as const),
        task: fc.nat(8),
        name: fc.constantFrom('Plan "A" \\ 1', '\u{1F4B6} costs', 'Docs'),
        status: fc.constantFrom('todo', 'done', null),
        priority: fc.constantFrom('high', null),
        phase: fc.constantFrom('Build', '\u00C4', null),
      }),
      fc.record({ kind: fc.constant('currency' as const) }),
      // Section 8 through its routes: a role's bill rate on the card, a member's own rates from a day on.
      fc.record({ kind: fc.constant('bill' as const), role: fc.nat(3), bill: fc.option(fc.integer({ min: 0, max: 40000 }), { nil: null }) }),
      fc.record({
        kind: fc.constant('own' as const),
        member: fc.nat(4),
        cost: fc.option(fc.integer({ min: 0, max: 25000 }), { nil: null }),
        bill: fc.option(fc.integer({ min: 0, max: 40000 }), { nil: null }),
        from: fc.constantFrom('1970-01-01', '2999-01-01'),
      }),
    ),
    { maxLength: 6 },
  ),
});

// The first two order one way by code point (U+FF21 first) and the other by UTF-16 unit (0xD83D first).
const NAMES = ['\u{1F600} Ann', '\uFF21nn', 'Ann', 'ann', '\u00C1nn'];
type Model = typeof modelArb extends fc.Arbitrary<infer T> ? T : never;

/*
 * Run first, whatever the seed, one per currency: the two names above share a task of 0.01 h (its
 * left-over hundredth goes to "\uFF21nn", first by code point), and a task of 0.5 h logged 1800 s (0.5 h)
 * by one and 18 s (0.005 h, 0.01 h rounded) by the other, at a rate of an odd last minor digit: 0.5 h
 * costs exactly half a minor unit more than a whole number of them.
 */
const examples: [Model][] = (['USD', 'JPY', 'KWD', 'CLF'] as const).map((currency, i) => [
  {
    currency,
    rates: [10001],
    // A bill rate, a member's own cost rate, and 7.5-hour days in two of the four.
    bills: i % 2 === 0 ? [20003] : [],
    perDay: i % 2 === 1 ? '7.5' : null,
    members: [{ role: 0, inProject: true, own: null }, { role: 0, inProject: true, own: i < 2 ? { cost: 12345, bill: null, from: '1970-01-01' } : null }],
    tasks: [
      { parent: null, hundredths: 1, fixedCents: 0, billable: true, assignees: [0, 1], logs: [], status: null, archived: false },
      { parent: 0, hundredths: 50, fixedCents: 1, billable: false, assignees: [0], logs: [{ member: 0, seconds: 1800 }, { member: 1, seconds: 18 }], status: 'todo', archived: false },
    ],
    changes: [],
  },
]);

async function build(model: Model) {
  const project = await createProject(h.api, { currency: model.currency });
  const roles: { id: string }[] = [];
  for (let i = 0; i < model.rates.length; i++) roles.push(await createJobRole(h.api));
  // An amount of `units` minor units (cents, yen, fils, ten-thousandths of a CLF): rates up to 25,000 of them.
  const toAmount = (units: number) => new Decimal(units).div(10 ** isoMinorUnit(model.currency)).toNumber();
  await setRateCard(
    h.api,
    project.id,
    model.rates.flatMap((rate, i) => (rate === null ? [] : [{ job_role_id: roles[i]?.id as string, hourly_rate: toAmount(rate) }])),
  );
  // Written as rows before anything is read (the first read computes every task): the unit of the
  // project, each role's bill rate on its card's entries (or an entry of its own), members' own rates.
  const scope = { team_id: h.teamId, project_id: project.id };
  if (model.perDay !== null) await h.db('projects').where({ team_id: h.teamId, id: project.id }).update({ rate_unit: 'day', hours_per_day: model.perDay });
  for (const [i, bill] of model.bills.entries()) {
    const role = roles[i];
    if (bill === null || !role) continue;
    const updated = await h.db('project_rate_cards').where({ ...scope, job_role_id: role.id }).update({ bill_rate: toAmount(bill) });
    if (updated === 0) await h.db('project_rate_cards').insert({ ...scope, job_role_id: role.id, hourly_rate: null, bill_rate: toAmount(bill), effective_from: '1970-01-01' });
  }
  const members: { id: string; inProject: boolean }[] = [];
  for (const [i, spec] of model.members.entries()) {
    // Names that order differently by locale, by UTF-16 unit and by code point, and namesakes.
    const member = await createMember(h.api, { name: NAMES[i % NAMES.length] as string });
    const role = spec.role < roles.length ? (roles[spec.role]?.id as string) : null;
    if (spec.inProject) await addToProject(h.api, project.id, member.id, role);
    if (spec.inProject && spec.own) {
      await h.db('project_member_rates').insert({
        ...scope,
        team_member_id: member.id,
        effective_from: spec.own.from,
        hourly_rate: spec.own.cost === null ? null : toAmount(spec.own.cost),
        bill_rate: spec.own.bill === null ? null : toAmount(spec.own.bill),
      });
    }
    members.push({ id: member.id, inProject: spec.inProject });
  }
  const tasks: ModelTask[] = [];
  const logs: string[] = [];
  for (const spec of model.tasks) {
    const candidate = spec.parent === null ? undefined : tasks[spec.parent % Math.max(tasks.length, 1)];
    const parent = candidate && candidate.depth < 3 ? tasks.indexOf(candidate) : null;
    const assignees = [...new Set(spec.assignees.map((i) => members[i % members.length]).filter((m) => m?.inProject).map((m) => m?.id as string))];
    const task = await createTask(h.api, project.id, {
      estimated_hours: spec.hundredths / 100,
      fixed_cost: toAmount(spec.fixedCents),
      billable: spec.billable,
      parent_task_id: parent === null ? null : tasks[parent]?.id,
      assignee_ids: assignees,
      status: spec.status,
    });
    for (const log of spec.logs) logs.push((await logTime(h.api, task.id, members[log.member % members.length]?.id as string, { seconds: log.seconds })).id);
    tasks.push({ id: task.id, parent, depth: parent === null ? 0 : (tasks[parent]?.depth ?? 0) + 1, billable: spec.billable, archived: false });
  }
  // Archive a few (with their subtrees) after building, as a user would.
  for (const [i, spec] of model.tasks.entries()) {
    if (spec.archived && i % 3 === 0 && tasks[i] && !tasks[i]?.archived) await archive(tasks, i);
  }
  // Read every list once, so the cache holds them when the changes come.
  for (const parentId of [null, ...tasks.filter((t) => !t.archived).map((t) => t.id)]) {
    for (const filter of ['all', 'billable', 'non-billable']) await list(project.id, `${parentId ? `&parent_task_id=${parentId}` : ''}&billable_filter=${filter}`);
  }
  await applyChanges(model, { projectId: project.id, roles, members, tasks, logs, toAmount });
  return { projectId: project.id, tasks };
}

type ModelTask = { id: string; parent: number | null; depth: number; billable: boolean; archived: boolean };

/** Archives a task through the API and marks its subtree archived in the model. */
async function archive(tasks: ModelTask[], index: number) {
  await h.api.delete(`/api/tasks/${tasks[index]?.id}`).expect(200);
  const mark = (i: number) => {
    const t = tasks[i];
    if (!t) return;
    t.archived = true;
    tasks.forEach((child, j) => child.parent === i && !child.archived && mark(j));
  };
  mark(index);
}

async function applyChanges(
  model: Model,
  built: {
    projectId: string;
    roles: { id: string }[];
    members: { id: string; inProject: boolean }[];
    tasks: ModelTask[];
    logs: string[];
    toAmount: (units: number) => number;
  },
) {
  const { projectId, roles, members, tasks, logs, toAmount } = built;
  const rates = [...model.rates];
  const bills: (number | null | undefined)[] = [...model.bills];
  let currency: string = model.currency;
  const live = () => tasks.filter((t) => !t.archived);
  for (const change of model.changes) {
    const task = live()[('task' in change ? change.task : 0) % Math.max(live().length, 1)];
    const member = members[('member' in change ? change.member : 0) % members.length] as { id: string; inProject: boolean };
    switch (change.kind) {
      case 'rate':
        rates[change.role % rates.length] = change.rate;
        await setRateCard(h.api, projectId, rates.flatMap((rate, i) => (rate === null ? [] : [{ job_role_id: roles[i]?.id as string, hourly_rate: toAmount(rate) }])));
        break;
      case 'bill': {
        bills[change.role % rates.length] = change.bill;
        // Every role with a cost or a bill rate listed, from today (a role left out has neither from then on).
        const card = rates.flatMap((rate, i) => {
          const bill = bills[i];
          if (rate === null && (bill === null || bill === undefined)) return [];
          return [{ job_role_id: roles[i]?.id as string, hourly_rate: rate === null ? null : toAmount(rate), bill_rate: bill === null || bill === undefined ? null : toAmount(bill) }];
        });
        await h.api.put(`/api/projects/${projectId}/rate-card`, { roles: card }).expect(200);
        break;
      }
      case 'own':
        if (member.inProject) {
          const own = { hourly_rate: change.cost === null ? null : toAmount(change.cost), bill_rate: change.bill === null ? null : toAmount(change.bill), effective_from: change.from };
          await h.api.put(`/api/projects/${projectId}/members/${member.id}/rates`, own).expect(200);
        }
        break;
      case 'role':
        if (member.inProject) await addToProject(h.api, projectId, member.id, change.role < roles.length ? (roles[change.role]?.id as string) : null);
        break;
      case 'rename':
        await h.api.patch(`/api/team-members/${member.id}`, { name: NAMES[change.name % NAMES.length] }).expect(200);
        break;
      case 'estimate':
        if (task) await h.api.patch(`/api/tasks/${task.id}`, { estimated_hours: change.hundredths / 100 }).expect(200);
        break;
      case 'assignees': {
        const ids = [...new Set(change.members.map((i) => members[i % members.length]).filter((m) => m?.inProject).map((m) => m?.id as string))];
        if (task) await h.api.patch(`/api/tasks/${task.id}`, { assignee_ids: ids }).expect(200);
        break;
      }
      case 'log':
        if (task) logs.push((await logTime(h.api, task.id, member.id, { seconds: change.seconds })).id);
        break;
      case 'unlog': {
        const [id] = logs.splice(change.log % Math.max(logs.length, 1), 1);
        if (id) await h.api.delete(`/api/time-logs/${id}`).expect(200);
        break;
      }
      case 'fixed':
        if (task) await h.api.put(`/api/project-finance/task/${task.id}/fixed-cost`, { fixed_cost: toAmount(change.fixedCents) }).expect(200);
        break;
      case 'billable':
        if (task) {
          task.billable = !task.billable;
          await h.api.patch(`/api/tasks/${task.id}`, { billable: task.billable }).expect(200);
        }
        break;
      case 'move': {
        if (!task) break;
        const index = tasks.indexOf(task);
        const parent = change.parent === null ? null : tasks.indexOf(live()[change.parent % live().length] as ModelTask);
        const ancestors = (i: number | null): number[] => (i === null ? [] : [i, ...ancestors(tasks[i]?.parent ?? null)]);
        const res = await h.api.patch(`/api/tasks/${task.id}`, { parent_task_id: parent === null ? null : tasks[parent]?.id });
        if (parent !== null && ancestors(parent).includes(index)) {
          expect(res.status).toBe(400); // its own descendant
        } else {
          expect(res.status).toBe(200);
          task.parent = parent;
        }
        break;
      }
      case 'avatar':
        await h.api.patch(`/api/team-members/${member.id}`, { avatar_url: change.avatar === null ? null : `https://img.example.com/${change.avatar}.png` }).expect(200);
        break;
      case 'archive':
        if (task) await archive(tasks, tasks.indexOf(task));
        break;
      case 'relabel':
        if (task) await h.api.patch(`/api/tasks/${task.id}`, { name: change.name, status: change.status, priority: change.priority, phase: change.phase }).expect(200);
        break;
      case 'currency':
        // Same minor unit (USD and EUR, JPY and KRW, KWD and BHD, CLF and UYW), so the amounts stay valid.
        currency = { USD: 'EUR', EUR: 'USD', JPY: 'KRW', KRW: 'JPY', KWD: 'BHD', BHD: 'KWD', CLF: 'UYW', UYW: 'CLF' }[currency] as string;
        await h.api.patch(`/api/projects/${projectId}`, { currency }).expect(200);
        break;
    }
  }
}

type Row = TaskSummary & { sub_tasks_count: number; variance: number; status: string | null; parent_task_id: string | null };
type List = { tasks: Row[]; totals: Record<string, number>; groups: ({ group_name: string; task_ids: string[] } & Record<string, number>)[] };

async function list(projectId: string, query: string): Promise<List> {
  return (await h.api.get(`/api/project-finance/project/${projectId}/tasks?group_by=status${query}`).expect(200)).body.body;
}

/** Every list level of a project: the top (null) and each live task's children. */
const levels = (tasks: ModelTask[]): (string | null)[] => [null, ...tasks.filter((t) => !t.archived).map((t) => t.id)];

/**
 * The rows a billable_filter=all list shows are stored (refreshed by each write); every other list is
 * rendered at read time by the same SQL. With the stored rows emptied, the service renders them all:
 * the two lists must be identical, field for field. Then they are stored again, as a migration would.
 */
async function expectStoredRowsAsRendered(projectId: string, parents: (string | null)[]) {
  const query = (parentId: string | null) => (parentId ? `&parent_task_id=${parentId}` : '');
  const stored = [];
  for (const parentId of parents) stored.push(await list(projectId, query(parentId)));
  // The revision bump makes the list cache miss, as any write would.
  await h.db.raw('update task_labor set list_row_json = null where team_id = ? and project_id = ?', [h.teamId, projectId]);
  await h.db.raw('update projects set revision = revision + 1 where team_id = ? and id = ?', [h.teamId, projectId]);
  const rendered = [];
  for (const parentId of parents) rendered.push(await list(projectId, query(parentId)));
  expect(stored).toEqual(rendered);
  await refreshProjectLabor(h.db, h.teamId, projectId);
}

/**
 * A list with a date range is computed on the fly (the calculator's roll-ups, finance.service.ts's
 * computedList), never from the stored roll-ups and rows (SQL): over every day, the two must be equal,
 * field for field, at every level and under every filter.
 */
async function expectRangedListsAsStored(projectId: string, parents: (string | null)[]) {
  for (const parentId of parents) {
    for (const filter of ['all', 'billable', 'non-billable']) {
      const query = `${parentId ? `&parent_task_id=${parentId}` : ''}&billable_filter=${filter}`;
      expect(await list(projectId, `${query}&from=1970-01-01&to=9999-12-31`)).toEqual(await list(projectId, query));
    }
  }
}

function checkSums(body: List) {
  for (const field of [...SUMMED, 'variance'] as const) {
    expect(cents(body.totals[field] as number)).toBe(body.tasks.reduce((s, r) => s + cents(r[field] as number), 0));
    expect(body.groups.reduce((s, g) => s + cents(g[field] as number), 0)).toBe(cents(body.totals[field] as number));
  }
  for (const row of body.tasks) expect(cents(row.variance)).toBe(cents(row.total_estimated_cost) - cents(row.total_actual_cost));
  const grouped = body.groups.flatMap((g) => g.task_ids);
  expect([...grouped].sort()).toEqual(body.tasks.map((r) => r.id).sort());
  for (const group of body.groups) {
    for (const id of group.task_ids) expect(body.tasks.find((r) => r.id === id)?.status ?? 'None').toBe(group.group_name);
  }
}

it('keeps the project list, its totals and groups equal to the breakdowns for random projects', async () => {
  await fc.assert(
    fc.asyncProperty(modelArb, async (model) => {
      const { projectId, tasks } = await build(model);
      // Every breakdown (alone and with subtasks) and every list (each level, each filter) as the oracle has it.
      await expectProjectMatchesOracle(h, projectId);
      const live = tasks.filter((t) => !t.archived);
      const own = new Map<string, TaskSummary>();
      for (const task of live) {
        const stored = await breakdown(h.api, task.id);
        own.set(task.id, stored.task);
        // Without live subtasks, the calculator's breakdown at read time is the same task: all of it must match.
        if (!live.some((t) => t.parent !== null && tasks[t.parent]?.id === task.id)) expect(stored).toEqual(await breakdown(h.api, task.id, true));
      }

      await expectStoredRowsAsRendered(projectId, levels(tasks));
      await expectRangedListsAsStored(projectId, levels(tasks));

      const subtree = (index: number): number[] => [index, ...tasks.flatMap((t, j) => (t.parent === index && !t.archived ? subtree(j) : []))];
      for (const parentId of levels(tasks)) {
        const parentQuery = parentId ? `&parent_task_id=${parentId}` : '';
        const all = await list(projectId, parentQuery);
        checkSums(all);
        const expectedChildren = live.filter((t) => (t.parent === null ? null : tasks[t.parent]?.id) === parentId).map((t) => t.id);
        expect(all.tasks.map((r) => r.id).sort()).toEqual([...expectedChildren].sort());
        for (const row of all.tasks) {
          const withSubtasks = await breakdown(h.api, row.id, true);
          expect(Object.fromEntries(['id', 'name', 'project_id', 'billable', 'currency', ...SUMMED, 'has_missing_rates'].map((f) => [f, row[f as keyof Row]]))).toEqual(withSubtasks.task);
        }

        for (const filter of ['billable', 'non-billable'] as const) {
          const filtered = await list(projectId, `${parentQuery}&billable_filter=${filter}`);
          checkSums(filtered);
          const passes = (i: number) => tasks[i]?.billable === (filter === 'billable');
          const expected = expectedChildren.flatMap((id) => {
            const members = subtree(tasks.findIndex((t) => t.id === id)).filter(passes);
            return members.length ? [{ id, members }] : [];
          });
          expect(filtered.tasks.map((r) => r.id).sort()).toEqual(expected.map((e) => e.id).sort());
          for (const { id, members } of expected) {
            const row = filtered.tasks.find((r) => r.id === id) as Row;
            for (const field of SUMMED) {
              expect(cents(row[field] as number)).toBe(members.reduce((s, i) => s + cents(own.get(tasks[i]?.id as string)?.[field] as number), 0));
            }
          }
        }
      }
    }),
    { examples, numRuns: Number(process.env.PROPERTY_RUNS ?? 12), seed: process.env.PROPERTY_SEED ? Number(process.env.PROPERTY_SEED) : undefined },
  );
});
