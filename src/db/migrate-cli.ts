import { loadConfig } from '../config';
import { configuredTarget, describeTarget, withoutTimeLimits } from './knex';
import { migrateToLatest } from './migrate';
import { openDatabase } from './open-database';

/** `npm run migrate`: applies pending migrations to the configured database, then exits. */
async function main() {
  const config = loadConfig();
  const target = withoutTimeLimits(configuredTarget(config));
  const { db, close } = await openDatabase(target);
  try {
    const applied = await migrateToLatest(db);
    console.log(`${describeTarget(target)}: ${applied.length ? `applied ${applied.join(', ')}` : 'already up to date'}`);
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  console.error('Migration failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
