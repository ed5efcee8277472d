import type { Db } from './knex';
import { migrationSource } from '../../migrations';

/** Applies pending migrations; returns the names of those it ran. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
  return applied;
}
