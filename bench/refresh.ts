import { createDb } from '../src/db/knex';
import { nowIso } from '../src/clock';
import { refreshTaskLabor } from '../src/finance/read-model/labor';
import { BENCH_TEAM_ID, projectId } from './dataset';
import { commandOption, serverUrl } from './support';

/*
 * npm run bench:refresh -- [--size full|small] [--project 0] [--runs 3]
 *
 * Times the full recomputation of one project of a generated bench database (`npm run bench --
 * --prepare-only` makes it), in a transaction that is rolled back, so the database is left as it was:
 * what the first list read after a rate-card change pays.
 */
const args = process.argv.slice(2);
const size = commandOption(args, 'size', 'full');
const url = new URL(serverUrl);
url.pathname = `/pfs_bench_${size}`;

async function main() {
  const db = createDb({ kind: 'postgres', url: url.toString() });
  const id = projectId(Number(commandOption(args, 'project', '0')));
  const project = await db('projects').where({ team_id: BENCH_TEAM_ID, id }).first('id', 'currency');
  const tasks = await db('tasks').where({ team_id: BENCH_TEAM_ID, project_id: id }).count<{ count: string }[]>({ count: '*' });
  for (let run = 0; run < Number(commandOption(args, 'runs', '3')); run++) {
    const started = performance.now();
    await db
      .transaction(async (trx) => {
        await refreshTaskLabor(trx, BENCH_TEAM_ID, project, 'all', nowIso());
        throw new Error('rolled back');
      })
      .catch((err: Error) => {
        if (err.message !== 'rolled back') throw err;
      });
    console.log(`full recomputation of ${tasks[0]?.count} tasks: ${(performance.now() - started).toFixed(0)} ms`);
  }
  await db.destroy();
}
void main();
