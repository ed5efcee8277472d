import { loadConfig } from '../config';
import { createDb, describeTarget, DatabaseTarget } from './knex';
import { migrateToLatest } from './migrate';

/** `npm run migrate`: applies pending migrations to the configured database, then exits. */
async function main() {
  const config = loadConfig();
  const target: DatabaseTarget = config.databaseUrl
    ? { kind: 'postgres', url: config.databaseUrl }
    : { kind: 'pglite', dataDir: config.dataDir };
  const db = createDb(target);
  try {
    const applied = await migrateToLatest(db);
    console.log(`${describeTarget(target)}: ${applied.length ? `applied ${applied.join(', ')}` : 'already up to date'}`);
  } finally {
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error('Migration failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
