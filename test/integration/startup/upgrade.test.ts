import { randomUUID } from 'node:crypto';
import knex, { Knex } from 'knex';
import request from 'supertest';
import { migrationSource } from '../../../migrations';
import { createApp } from '../../../src/app';
import { createDb, Db } from '../../../src/db/knex';
import { migrateToLatest } from '../../../src/db/migrate';
import { CALCULATOR_VERSION } from '../../../src/finance/rules/calculator';
import { refreshStaleProjects } from '../../../src/finance/read-model/freshness';
import { createLogger } from '../../../src/logger';
import { authenticate, hashSecret } from '../../../src/auth/tokens.service';
import { bootstrapAccess } from '../../../src/bootstrap';
import { DEFAULT_TEAM_ID, createTeamWithAdmin, ensureDefaultTeam } from '../../../src/teams/teams.service';
import { backendFromEnv } from '../../support/backend';
import { addToProject, createJobRole, createMember, createProject, createTask, logTime, setRateCard } from '../../support/fixtures';
import { Api, Harness } from '../../support/harness';
import { Filter, oracleList, readInputs } from '../../support/oracle';
import { expectProjectMatchesOracle } from '../figures/check';

/*
 * An upgrade from an older release (migrations 001-003, undated rate cards and roles, no per-day
 * totals) to dated costing (004) and on: data written with that release's schema keeps every figure,
 * now with cost lines, and its rate card and roles become history from the beginning (1970-01-01).
 * Expected figures are worked out by hand below. Then the upgrade to stored totals (006), checked
 * against the oracle.
 */
const backend = backendFromEnv();
let db: Db;
let dropDatabase = async () => {};

beforeAll(async () => {
  if (backend.kind === 'postgres') {
    const name = `pfs_upgrade_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const admin: Knex = knex({ client: 'pg', connection: backend.url, pool: { min: 0, max: 1 } });
    await admin.raw(`create database ${name}`);
    const url = new URL(backend.url);
    url.pathname = `/${name}`;
    db = createDb({ kind: 'postgres', url: url.toString() });
    dropDatabase = async () => {
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    };
  } else {
    db = createDb({ kind: 'pglite', dataDir: undefined }); // in memory
  }
}, 120_000);

/** Undoes the migration `first` and every later one, newest first (so a new migration leaves these tests as they are). */
async function undoFrom(first: string): Promise<void> {
  for (;;) {
    const [completed] = (await db.migrate.list({ migrationSource })) as [({ name: string } | string)[], unknown];
    const last = completed.map((entry) => (typeof entry === 'string' ? entry : entry.name)).sort().at(-1);
    if (last === undefined || last < first) return;
    await db.migrate.down({ migrationSource });
  }
}

afterAll(async () => {
  await db.destroy();
  await dropDatabase();
});

it('keeps every figure of a database made by the previous release, and adds its cost lines', async () => {
  // The previous release's schema: the first three migrations.
  for (let i = 0; i < 3; i++) await db.migrate.up({ migrationSource });
  const [, pending] = (await db.migrate.list({ migrationSource })) as [unknown, string[]];
  expect(pending).toEqual(['20261124_004_dated_costing', '20261125_005_member_projects', '20261125_006_stored_totals', '20261125_007_input_marks', '20261125_008_covering_totals', '20261126_009_new_task_marks', '20261126_010_labor_fillfactor', '20261127_011_list_order_indexes', '20261127_012_token_lifecycle', '20261127_020_events', '20261128_022_revenue_rates', '20261128_023_budgets', '20261128_024_revenue_figures', '20261128_025_budget_settles']);

  const { team, token } = await createTeamWithAdmin(db, 'upgraded team');
  const t = team.id;
  const [dev] = await db('job_roles').insert({ team_id: t, name: 'Dev' }).returning('id');
  const [qa] = await db('job_roles').insert({ team_id: t, name: 'QA' }).returning('id');
  const [ann] = await db('team_members').insert({ team_id: t, name: 'Ann' }).returning('id');
  const [bo] = await db('team_members').insert({ team_id: t, name: 'Bo' }).returning('id');
  const [project] = await db('projects').insert({ team_id: t, name: 'Old project', currency: 'USD' }).returning('id');
  const p = project.id;
  // The previous release wrote every rate from 1970-01-01, and one role per member.
  await db('project_rate_cards').insert([
    { team_id: t, project_id: p, job_role_id: dev.id, hourly_rate: 100, effective_from: '1970-01-01' },
    { team_id: t, project_id: p, job_role_id: qa.id, hourly_rate: 60, effective_from: '1970-01-01' },
  ]);
  await db('project_members').insert([
    { team_id: t, project_id: p, team_member_id: ann.id, job_role_id: dev.id },
    { team_id: t, project_id: p, team_member_id: bo.id, job_role_id: qa.id },
  ]);
  const [parent] = await db('tasks').insert({ team_id: t, project_id: p, name: 'Parent', estimated_hours: 10, fixed_cost: 50 }).returning('id');
  const [child] = await db('tasks')
    .insert({ team_id: t, project_id: p, name: 'Child', estimated_hours: 2, parent_task_id: parent.id })
    .returning('id');
  await db('task_assignees').insert([
    { team_id: t, task_id: parent.id, team_member_id: ann.id },
    { team_id: t, task_id: parent.id, team_member_id: bo.id },
    { team_id: t, task_id: child.id, team_member_id: bo.id },
  ]);
  const logs = [
    { task: parent.id, member: ann.id, seconds: 3600, at: '2026-03-01T09:00:00Z' },
    { task: parent.id, member: ann.id, seconds: 1800, at: '2026-04-15T23:30:00Z' },
    { task: parent.id, member: bo.id, seconds: 1800, at: '2026-05-02T10:00:00Z' },
    { task: child.id, member: bo.id, seconds: 3600, at: '2026-05-03T10:00:00Z' },
  ];
  for (const log of logs) {
    await db('time_logs').insert({ team_id: t, task_id: log.task, team_member_id: log.member, seconds: log.seconds, logged_at: log.at });
  }
  await db('task_member_time').insert([
    { team_id: t, project_id: p, task_id: parent.id, team_member_id: ann.id, total_seconds: 5400, log_count: 2 },
    { team_id: t, project_id: p, task_id: parent.id, team_member_id: bo.id, total_seconds: 1800, log_count: 1 },
    { team_id: t, project_id: p, task_id: child.id, team_member_id: bo.id, total_seconds: 3600, log_count: 1 },
  ]);

  expect(await migrateToLatest(db)).toEqual(['20261124_004_dated_costing', '20261125_005_member_projects', '20261125_006_stored_totals', '20261125_007_input_marks', '20261125_008_covering_totals', '20261126_009_new_task_marks', '20261126_010_labor_fillfactor', '20261127_011_list_order_indexes', '20261127_012_token_lifecycle', '20261127_020_events', '20261128_022_revenue_rates', '20261128_023_budgets', '20261128_024_revenue_figures', '20261128_025_budget_settles']);
  const app = createApp({ db, logger: createLogger('silent'), tokenCacheSeconds: 3600, listCacheMb: 0 });
  const get = async (path: string) => {
    const res = await request(app).get(path).set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    return res.body.body;
  };

  // Parent: 10 h over Ann and Bo, 5 h each. Ann (Dev, 100/h): 500.00 estimated; 5400 s = 1.5 h -> 150.00
  // in one line (both logs at 100/h). Bo (QA, 60/h): 300.00 estimated; 0.5 h -> 30.00.
  const breakdown = await get(`/api/project-finance/task/${parent.id}/breakdown`);
  expect(breakdown.task).toMatchObject({
    estimated_hours: 10,
    logged_hours: 2,
    estimated_labor_cost: 800,
    actual_labor_cost: 180,
    fixed_cost: 50,
    total_estimated_cost: 850,
    total_actual_cost: 230,
  });
  expect(breakdown.members).toEqual([
    expect.objectContaining({
      name: 'Ann',
      job_title_name: 'Dev',
      hourly_rate: 100,
      estimated_cost: 500,
      actual_cost: 150,
      cost_lines: [{ job_role: 'Dev', hourly_rate: 100, bill_rate: 0, logged_hours: 1.5, actual_cost: 150, actual_revenue: 0, first_day: '2026-03-01', last_day: '2026-04-15' }],
    }),
    expect.objectContaining({
      name: 'Bo',
      job_title_name: 'QA',
      hourly_rate: 60,
      estimated_cost: 300,
      actual_cost: 30,
      cost_lines: [{ job_role: 'QA', hourly_rate: 60, bill_rate: 0, logged_hours: 0.5, actual_cost: 30, actual_revenue: 0, first_day: '2026-05-02', last_day: '2026-05-02' }],
    }),
  ]);

  // The list's row of Parent adds Child: 2 h x 60 = 120.00 estimated, 1 h x 60 = 60.00 actual.
  const list = await get(`/api/project-finance/project/${p}/tasks`);
  expect(list.tasks).toEqual([
    expect.objectContaining({
      id: parent.id,
      estimated_hours: 12,
      logged_hours: 3,
      estimated_labor_cost: 920,
      actual_labor_cost: 240,
      fixed_cost: 50,
      total_estimated_cost: 970,
      total_actual_cost: 290,
      variance: 680,
      sub_tasks_count: 1,
    }),
  ]);

  // The card and the roles are history from the beginning; the project is in UTC.
  expect(await get(`/api/projects/${p}`)).toMatchObject({ time_zone: 'UTC' });
  const history = await get(`/api/projects/${p}/rate-card/history`);
  expect(history.entries.map((e: { job_role_name: string; hourly_rate: number; effective_from: string; written_by: string | null }) => [e.job_role_name, e.hourly_rate, e.effective_from, e.written_by])).toEqual([
    ['Dev', 100, '1970-01-01', null],
    ['QA', 60, '1970-01-01', null],
  ]);
  const members = await get(`/api/projects/${p}/members`);
  expect(members.map((m: { name: string; job_role_name: string; roles: unknown[] }) => [m.name, m.job_role_name, m.roles])).toEqual([
    ['Ann', 'Dev', [{ job_role_id: dev.id, job_role_name: 'Dev', effective_from: '1970-01-01' }]],
    ['Bo', 'QA', [{ job_role_id: qa.id, job_role_name: 'QA', effective_from: '1970-01-01' }]],
  ]);
});

/** The calculator version of the release before 006, which stored no totals. */
const PREVIOUS_CALCULATOR_VERSION = 2;

/** The columns 006 adds: each task's own totals and variance, and their roll-ups per kind. */
const STORED_TOTALS = ['total_estimated_cost', 'total_actual_cost', 'variance'].flatMap((figure) => [
  figure,
  `tree_billable_${figure}`,
  `tree_non_billable_${figure}`,
]);

/** The API of a new team on the upgraded database (the harness of these tests, on `db`). */
async function harnessOfNewTeam(name: string): Promise<Harness> {
  const { team, token } = await createTeamWithAdmin(db, name);
  const app = createApp({ db, logger: createLogger('silent'), tokenCacheSeconds: 3600, listCacheMb: 0 });
  return { db, app, api: new Api(app, token), teamId: team.id, close: async () => {} };
}

it('recomputes figures stored before the totals were (006) before any read answers them, and at start-up', async () => {
  const h = await harnessOfNewTeam('team of the previous release');
  const role = await createJobRole(h.api);
  const ann = await createMember(h.api, { name: 'Ann' });
  const bo = await createMember(h.api, { name: 'Bo' });
  // Fixed costs at every level, billable and non-billable tasks under each other, split estimates.
  const makeProject = async () => {
    const project = await createProject(h.api);
    await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 33.33 }]);
    for (const m of [ann, bo]) await addToProject(h.api, project.id, m.id, role.id);
    const parent = await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [ann.id, bo.id], fixed_cost: 5 });
    const child = await createTask(h.api, project.id, {
      estimated_hours: 0.5,
      billable: false,
      fixed_cost: 7.25,
      assignee_ids: [bo.id],
      parent_task_id: parent.id,
    });
    await createTask(h.api, project.id, { estimated_hours: 2, fixed_cost: 1.5, assignee_ids: [ann.id], parent_task_id: child.id });
    await createTask(h.api, project.id, { billable: false, fixed_cost: 100 });
    await logTime(h.api, child.id, ann.id, { seconds: 1234 });
    await logTime(h.api, parent.id, bo.id, { seconds: 7200 });
    await expectProjectMatchesOracle(h, project.id);
    return project;
  };
  const read = await makeProject();
  const started = await makeProject();

  // Back to the previous release: 011 to 006 undone, the figures stamped by its calculator (version 2).
  expect(CALCULATOR_VERSION).toBeGreaterThan(PREVIOUS_CALCULATOR_VERSION);
  await undoFrom('20261125_006_stored_totals');
  await db('project_figures').where({ team_id: h.teamId }).update({ calculator_version: PREVIOUS_CALCULATOR_VERSION });
  await db.migrate.latest({ migrationSource });
  const withoutTotals = async (projectId: string) => {
    const rows = await db('task_labor')
      .where({ team_id: h.teamId, project_id: projectId })
      .where((q) => {
        for (const column of STORED_TOTALS) q.orWhereNull(column);
      })
      .select('task_id');
    return rows.length;
  };
  expect(await withoutTotals(read.id)).toBe(4);

  // A read before start-up's pass: the old stamp sends every read to the calculator first.
  const inputs = await readInputs(db, h.teamId, read.id);
  for (const filter of ['all', 'billable', 'non-billable'] as Filter[]) {
    const res = await h.api.get(`/api/project-finance/project/${read.id}/tasks?billable_filter=${filter}`).expect(200);
    expect({ filter, body: res.body.body }).toEqual({ filter, body: oracleList(inputs, filter) });
  }
  expect(await withoutTotals(read.id)).toBe(0);
  await expectProjectMatchesOracle(h, read.id);

  // Start-up's pass recomputes the project no read reached.
  expect(await withoutTotals(started.id)).toBe(4);
  expect(await refreshStaleProjects(db)).toBe(1);
  expect(await withoutTotals(started.id)).toBe(0);
  await expectProjectMatchesOracle(h, started.id);
});

it('marks the tasks a previous release created and no refresh computed yet (009), so the next read computes them', async () => {
  const h = await harnessOfNewTeam('team with a task never computed');
  const role = await createJobRole(h.api);
  const ann = await createMember(h.api, { name: 'Ann' });
  const project = await createProject(h.api);
  await setRateCard(h.api, project.id, [{ job_role_id: role.id, hourly_rate: 40 }]);
  await addToProject(h.api, project.id, ann.id, role.id);
  const parent = await createTask(h.api, project.id, { estimated_hours: 1, assignee_ids: [ann.id] });
  await expectProjectMatchesOracle(h, project.id);

  // The previous release's task creation: the project's revision bumped, the task written, no mark.
  await undoFrom('20261126_009_new_task_marks');
  const [created] = await db('tasks')
    .insert({ team_id: h.teamId, project_id: project.id, parent_task_id: parent.id, name: 'Made before the upgrade', estimated_hours: '2.5' })
    .returning('id');
  await db('task_assignees').insert({ team_id: h.teamId, task_id: created.id, team_member_id: ann.id });
  await db('projects').where({ team_id: h.teamId, id: project.id }).increment('revision', 1);
  await db.migrate.latest({ migrationSource });

  const marked = await db('stale_tasks').where({ team_id: h.teamId, project_id: project.id, task_id: created.id }).select('task_id');
  expect(marked).toHaveLength(1);
  // Worked by hand: 2.5 h at 40 = 100 on the new task, 40 + 100 = 140 rolled up into its parent.
  const res = await h.api.get(`/api/project-finance/project/${project.id}/tasks`).expect(200);
  expect(res.body.body.tasks.map((task: { id: string; estimated_labor_cost: number }) => [task.id, task.estimated_labor_cost])).toEqual([[parent.id, 140]]);
  await expectProjectMatchesOracle(h, project.id);
});

it('marks the tokens earlier releases made from ADMIN_TOKEN (012), so a start with a new value revokes every one of them', async () => {
  await db.migrate.down({ migrationSource, name: '20261127_012_token_lifecycle' });
  await ensureDefaultTeam(db);
  // Two values of ADMIN_TOKEN left active by the earlier release (it never revoked one), and a token made by hand.
  const secrets = ['first-admin-token-0123456789abcdefghij', 'second-admin-token-0123456789abcdefghi', 'pft_made-by-hand-0123456789abcdefghijklm'];
  await db('api_tokens').insert([
    { team_id: DEFAULT_TEAM_ID, name: 'ADMIN_TOKEN', role: 'admin', secret_hash: hashSecret(secrets[0] as string) },
    { team_id: DEFAULT_TEAM_ID, name: 'ADMIN_TOKEN', role: 'admin', secret_hash: hashSecret(secrets[1] as string) },
    { team_id: DEFAULT_TEAM_ID, name: 'ci', role: 'admin', secret_hash: hashSecret(secrets[2] as string) },
  ]);
  await db.migrate.latest({ migrationSource });
  const current = 'third-admin-token-0123456789abcdefghij';
  await bootstrapAccess(db, current);
  expect(await authenticate(db, secrets[0] as string)).toBeUndefined();
  expect(await authenticate(db, secrets[1] as string)).toBeUndefined();
  expect(await authenticate(db, secrets[2] as string)).toMatchObject({ teamId: DEFAULT_TEAM_ID, tokenName: 'ci' });
  expect(await authenticate(db, current)).toMatchObject({ teamId: DEFAULT_TEAM_ID, role: 'admin' });
});

it('leaves room on the pages of task_labor for HOT updates (010), and gives it back when undone', async () => {
  const fillfactor = async () => {
    const result = await db.raw("select reloptions from pg_class where oid = 'task_labor'::regclass");
    return (result.rows[0]?.reloptions ?? []) as string[];
  };
  expect(await fillfactor()).toEqual(['fillfactor=50']);
  await undoFrom('20261126_010_labor_fillfactor');
  expect(await fillfactor()).toEqual([]);
  await db.migrate.latest({ migrationSource });
  expect(await fillfactor()).toEqual(['fillfactor=50']);
});
