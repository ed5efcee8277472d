import { createDb } from './src/db/knex';
import { migrateToLatest } from './src/db/migrate';
import { listProjectTasks } from './src/finance/finance.service';
import { toJson } from './src/http/respond';
import { BENCH_TEAM_ID, SIZES, datasetPresent, generate, projectId } from './bench/dataset';
(async () => {
  const admin = createDb({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/postgres' });
  const ex = await admin.raw("select 1 from pg_database where datname='pfs_bench_small'");
  if (!ex.rows.length) await admin.raw('create database pfs_bench_small');
  await admin.destroy();
  const db = createDb({ kind: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/pfs_bench_small' });
  await migrateToLatest(db);
  if (!(await datasetPresent(db, SIZES.small))) await generate(db, SIZES.small, () => {});
  for (let k = 0; k < 5; k++) {
    let t = performance.now();
    const body = await listProjectTasks(db, BENCH_TEAM_ID, projectId(0), { billable_filter: 'all' });
    const mid = performance.now();
    const json = toJson({ success: true, body });
    console.log('list 2000: service', (mid - t).toFixed(1), 'toJson', (performance.now() - mid).toFixed(1), 'bytes', json.length);
  }
  await db.destroy();
})();
