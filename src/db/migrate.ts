import type { Db } from './knex';
import { migrationSource } from '../../migrations';
import { refreshStaleProjects } from '../finance/read-model/freshness';

/**
 * Applies pending migrations, then computes the stored figures of projects that have none or were
 * computed by another calculator version (a no-op on an up-to-date database); returns the names of the migrations it ran.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  await refreshStaleProjects(db);
  return applied;
}
