import type { Db } from './knex';
import { migrationSource } from '../../migrations';
import { refreshStaleLabor } from '../finance/labor';

/**
 * Applies pending migrations, then fills stored figures that a migration added empty (a no-op on an
 * up-to-date database); returns the names of the migrations it ran.
 */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  await refreshStaleLabor(db);
  return applied;
}
