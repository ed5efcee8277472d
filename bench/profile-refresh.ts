import { createDb } from '../src/db/knex';
import { refreshTaskLabor } from '../src/finance/labor';
import * as repo from '../src/finance/finance.repository';
import { BENCH_TEAM_ID, projectId } from './dataset';
import { nowIso } from '../src/clock';

async function main() {
  const db = createDb({ kind: 'postgres', url: process.env.URL ?? 'postgres://postgres@127.0.0.1:5432/pfs_bench_full' });
  const pid = projectId(Number(process.env.P ?? 0));
  const project = await db('projects').where({ team_id: BENCH_TEAM_ID, id: pid }).first();
  const now = nowIso();
  let t = performance.now();
  const tasks = await repo.tasksInScope(db, BENCH_TEAM_ID, { kind: 'project', projectId: pid });
  console.log('tasks', tasks.length, (performance.now() - t).toFixed(0), 'ms');
  t = performance.now();
  const parts = await repo.participantsInScope(db, BENCH_TEAM_ID, { kind: 'tasks', projectId: pid, taskIds: tasks.slice(0, 2000).map((x) => x.id) }, now);
  console.log('participants of 2000', parts.length, (performance.now() - t).toFixed(0), 'ms', 'lines', parts.reduce((n, p) => n + p.cost_lines.length, 0));
  {
    const { financeOf, memberInputsByTask } = await import('../src/finance/labor');
    const { presentMembers, presentGroups, presentAssignees } = await import('../src/finance/present');
    const { toJson } = await import('../src/json');
    let t1 = performance.now();
    const byTask = memberInputsByTask(parts);
    console.log('parse', (performance.now() - t1).toFixed(0));
    t1 = performance.now();
    const fins = tasks.slice(0, 2000).map((task) => financeOf(task, byTask.get(task.id), project.currency));
    console.log('calc', (performance.now() - t1).toFixed(0));
    t1 = performance.now();
    let n = 0;
    for (let i = 0; i < fins.length; i++) {
      n += toJson(presentMembers(fins[i]!.members)).length + toJson(presentGroups(fins[i]!.members)).length + toJson(presentAssignees(byTask.get(tasks[i]!.id) ?? [])).length;
    }
    console.log('present+json', (performance.now() - t1).toFixed(0), 'chars', n);
  }
  (globalThis as any).T = { sql: 0, up: 0, roll: 0 };
  if (process.env.FULL) {
    t = performance.now();
    await db.transaction(async (trx) => { await refreshTaskLabor(trx, BENCH_TEAM_ID, project, 'all', now); await trx.rollback(); }).catch(() => {});
    console.log('full refresh', (performance.now() - t).toFixed(0), 'ms', (globalThis as any).T);
  }
  await db.destroy();
}
main();
