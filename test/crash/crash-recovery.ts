import { ChildProcess, execSync } from 'node:child_process';
import { createDb, DatabaseTarget, Db } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createTeamWithAdmin } from '../../src/teams/teams.service';
import { commandOption, freePort, startService } from '../../bench/support';
import { scratchDatabase } from './scratch-database';

/*
 * npm run crash-test [-- --backend postgres|pglite|both] [--rounds 3]
 *
 * Sends a stream of writes to the service, kills it with SIGKILL mid-stream, restarts it on the same
 * database, and checks that every acknowledged write is there and nothing is half-written: each time
 * log is counted in its running total exactly once, each task's stored labor figures match a fresh
 * computation, and each fixed-cost change has its history entry. Repeats for several rounds.
 *
 * Nothing depends on the machine's speed: the service listens on a port found free at start (another
 * run on the same machine cannot answer for it), is waited for until it is ready or has exited, and is
 * killed after a random number of acknowledged writes rather than after a fixed time.
 */

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => commandOption(args, name, fallback);
const rounds = Number(option('rounds', '3'));
const fixedPort = Number(option('port', '0'));
let PORT = 0;
let base = '';

/** Starts the built service on a port free at that moment (or --port). */
async function start(target: DatabaseTarget): Promise<ChildProcess> {
  PORT = fixedPort || (await freePort());
  base = `http://127.0.0.1:${PORT}`;
  return startService(target, PORT);
}

/** Until /readyz answers 200, however long start-up takes; fails at once if the service exits first. */
async function waitReady(child: ChildProcess, what: string): Promise<void> {
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what}: the service exited (code ${child.exitCode}, signal ${child.signalCode}) before it was ready on port ${PORT}; its output is above`);
    }
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Acknowledged = { logs: Set<string>; roles: Set<string>; fixedCosts: number };

async function api(token: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as { body: Record<string, unknown> & { id: string } } };
}

/**
 * Writers that keep going until the service dies; only 2xx answers count as acknowledged. The service is
 * killed once `killAfter` writes of this round are acknowledged, with the other writers' requests in flight.
 */
async function writeUntilKilled(token: string, fixture: Fixture, acked: Acknowledged, killAfter: number, child: ChildProcess) {
  let n = 0;
  let ackedThisRound = 0;
  const acknowledged = () => {
    if (++ackedThisRound === killAfter) child.kill('SIGKILL');
  };
  const writer = async (kind: number) => {
    for (;;) {
      const i = n++;
      try {
        if (kind === 0 || kind === 1) {
          const member = fixture.members[i % fixture.members.length] as string;
          const res = await api(token, 'POST', `/api/tasks/${fixture.tasks[i % fixture.tasks.length]}/time-logs`, { team_member_id: member, seconds: 60 + (i % 600) });
          if (res.status === 201) {
            acked.logs.add(res.body.body.id);
            acknowledged();
          }
        } else if (kind === 2) {
          const res = await api(token, 'POST', '/api/job-roles', { name: `crash role ${process.pid}-${Date.now()}-${i}` });
          if (res.status === 201) {
            acked.roles.add(res.body.body.id);
            acknowledged();
          }
        } else {
          const res = await api(token, 'PUT', `/api/project-finance/task/${fixture.tasks[0]}/fixed-cost`, { fixed_cost: (i % 100000) / 100 });
          if (res.status === 200) {
            acked.fixedCosts++;
            acknowledged();
          }
        }
      } catch {
        return; // the connection died with the service
      }
    }
  };
  await Promise.all([0, 1, 2, 3, 0, 1].map(writer));
  // Every writer lost its connection, yet the kill was not sent: the service died by itself.
  if (ackedThisRound < killAfter) throw new Error(`the service went away after ${ackedThisRound} acknowledged writes, before it was killed (its output is above)`);
}

type Fixture = { token: string; teamId: string; projectId: string; tasks: string[]; members: string[] };

async function setUp(db: Db): Promise<Fixture> {
  const { team, token } = await createTeamWithAdmin(db, `crash team ${Date.now()}`);
  const [project] = await db('projects').insert({ team_id: team.id, name: `crash ${Date.now()}` }).returning('id');
  const [role] = await db('job_roles').insert({ team_id: team.id, name: 'Crash engineer' }).returning('id');
  await db('project_rate_cards').insert({ team_id: team.id, project_id: project.id, job_role_id: role.id, hourly_rate: '87.5' });
  const members: string[] = [];
  for (let i = 0; i < 3; i++) {
    const [member] = await db('team_members').insert({ team_id: team.id, name: `Crash ${i}` }).returning('id');
    await db('project_members').insert({ team_id: team.id, project_id: project.id, team_member_id: member.id });
    await db('project_member_roles').insert({ team_id: team.id, project_id: project.id, team_member_id: member.id, effective_from: '1970-01-01', job_role_id: role.id });
    members.push(member.id);
  }
  return { token, teamId: team.id, projectId: project.id, tasks: [], members };
}

/** Checks run on the database itself, the service stopped. Returns the problems found. */
async function verify(db: Db, fixture: Fixture, acked: Acknowledged): Promise<string[]> {
  const problems: string[] = [];
  const team = fixture.teamId;
  const logIds = new Set((await db('time_logs').where({ team_id: team }).select('id')).map((r: { id: string }) => r.id));
  const missingLogs = [...acked.logs].filter((id) => !logIds.has(id));
  if (missingLogs.length) problems.push(`${missingLogs.length} acknowledged time logs are missing`);
  const roleIds = new Set((await db('job_roles').where({ team_id: team }).select('id')).map((r: { id: string }) => r.id));
  const missingRoles = [...acked.roles].filter((id) => !roleIds.has(id));
  if (missingRoles.length) problems.push(`${missingRoles.length} acknowledged job roles are missing`);
  const totals = await db.raw(
    `select coalesce(l.task_id, x.task_id) as task_id, coalesce(l.team_member_id, x.team_member_id) as member, l.seconds, l.logs, x.total_seconds, x.log_count
     from (select task_id, team_member_id, sum(seconds) as seconds, count(*) as logs from time_logs where team_id = ? group by 1, 2) l
     full join (select * from task_member_time where team_id = ?) x on x.task_id = l.task_id and x.team_member_id = l.team_member_id
     where coalesce(l.seconds, 0) <> coalesce(x.total_seconds, 0) or coalesce(l.logs, 0) <> coalesce(x.log_count, 0)`,
    [team, team],
  );
  if (totals.rows.length) problems.push(`${totals.rows.length} running totals disagree with their logs`);
  // The per-day totals likewise (every crash project is in UTC).
  const daily = await db.raw(
    `select 1
     from (select task_id, team_member_id, (logged_at at time zone 'UTC')::date as day, sum(seconds) as seconds, count(*) as logs
           from time_logs where team_id = ? group by 1, 2, 3) l
     full join (select * from task_member_day_time where team_id = ?) x
       on x.task_id = l.task_id and x.team_member_id = l.team_member_id and x.day = l.day
     where coalesce(l.seconds, 0) <> coalesce(x.total_seconds, 0) or coalesce(l.logs, 0) <> coalesce(x.log_count, 0)`,
    [team, team],
  );
  if (daily.rows.length) problems.push(`${daily.rows.length} per-day running totals disagree with their logs`);
  const [task] = await db('tasks').where({ team_id: team, id: fixture.tasks[0] }).select('finance_version');
  const [history] = await db('fixed_cost_history').where({ team_id: team, task_id: fixture.tasks[0] }).count<{ count: number }[]>('* as count');
  const count = Number(history?.count ?? 0);
  if (count !== task.finance_version - 1) problems.push(`finance version ${task.finance_version} but ${count} history entries`);
  if (count < acked.fixedCosts) problems.push(`${acked.fixedCosts} fixed-cost updates acknowledged, ${count} recorded`);
  return problems;
}

/** Stored labor figures against the calculator, through the running service: list rows vs breakdowns. */
async function verifyFigures(fixture: Fixture): Promise<string[]> {
  const list = await api(fixture.token, 'GET', `/api/project-finance/project/${fixture.projectId}/tasks`);
  const problems: string[] = [];
  for (const row of list.body.body.tasks as Record<string, unknown>[]) {
    const breakdown = await api(fixture.token, 'GET', `/api/project-finance/task/${String(row.id)}/breakdown`);
    const task = breakdown.body.body.task as Record<string, unknown>;
    for (const field of ['logged_hours', 'estimated_labor_cost', 'actual_labor_cost', 'total_actual_cost']) {
      if (row[field] !== task[field]) problems.push(`task ${String(row.id)}: list ${field} ${String(row[field])} vs breakdown ${String(task[field])}`);
    }
  }
  return problems;
}

async function runBackend(kind: 'postgres' | 'pglite'): Promise<boolean> {
  const { target, cleanup } = await scratchDatabase(kind, 'pfs_crash');
  const acked: Acknowledged = { logs: new Set(), roles: new Set(), fixedCosts: 0 };
  let ok = true;
  try {
    let db = createDb(target);
    await migrateToLatest(db);
    const fixture = await setUp(db);
    await db.destroy();
    let child = await start(target);
    await waitReady(child, `${kind}, first start`);
    for (let i = 0; i < 2; i++) {
      const task = await api(fixture.token, 'POST', `/api/projects/${fixture.projectId}/tasks`, { name: `crash task ${i}`, estimated_hours: 10, assignee_ids: fixture.members.slice(0, 2) });
      fixture.tasks.push(task.body.body.id);
    }
    for (let round = 1; round <= rounds; round++) {
      const killAfter = 20 + Math.floor(Math.random() * 200);
      await writeUntilKilled(fixture.token, fixture, acked, killAfter, child);
      await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve)));
      db = createDb(target);
      const problems = await verify(db, fixture, acked);
      await db.destroy();
      child = await start(target);
      await waitReady(child, `${kind}, restart after round ${round}`);
      problems.push(...(await verifyFigures(fixture)));
      console.log(
        `${kind} round ${round}: killed after ${killAfter} acknowledged writes; acknowledged so far ${acked.logs.size} logs, ${acked.roles.size} roles, ${acked.fixedCosts} fixed-cost updates; ${problems.length ? `PROBLEMS: ${problems.join('; ')}` : 'all present, nothing half-written'}`,
      );
      if (problems.length) ok = false;
    }
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  } finally {
    await cleanup();
  }
  return ok;
}

async function main() {
  execSync('npm run --silent build', { stdio: 'inherit' });
  const which = option('backend', 'both');
  const backends = which === 'both' ? (['postgres', 'pglite'] as const) : [which as 'postgres' | 'pglite'];
  let ok = true;
  for (const backend of backends) ok = (await runBackend(backend)) && ok;
  console.log(ok ? 'crash recovery: passed' : 'crash recovery: FAILED');
  process.exit(ok ? 0 : 1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
