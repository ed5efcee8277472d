import type { Knex } from 'knex';
import type { Actor } from '../auth/roles';
import { createAdminSecret } from '../auth/tokens.service';
import { AppError } from '../http/errors';

/** The team that `ADMIN_TOKEN` and the demo data belong to; fixed so every start-up finds it. */
export const DEFAULT_TEAM_ID = '00000000-0000-4000-8000-000000000001';

export async function ensureDefaultTeam(db: Knex): Promise<void> {
  await db('teams').insert({ id: DEFAULT_TEAM_ID, name: 'Default team' }).onConflict('id').ignore();
}

/**
 * Creating a team gives it its own share of the instance: an operator's act (docs/api.md, POST /api/teams), so
 * only an admin token of the installation's own team may do it, never another team's admin.
 */
export function requireOperator(actor: Actor): void {
  if (actor.teamId === DEFAULT_TEAM_ID && actor.role === 'admin') return;
  throw new AppError(403, 'FORBIDDEN', 'Only an admin token of the default team (the operator) may create teams');
}

/**
 * A new, empty team with its first admin token (whose secret is only in this answer); the team
 * records the token that created it, if any (none for the command line or tests).
 */
export async function createTeamWithAdmin(db: Knex, name: string, createdByTokenId?: string) {
  return db.transaction(async (trx) => {
    // The creator's column is written only when there is one, so tests of upgrades from a schema
    // without it (test/integration/startup/upgrade.test.ts) can still make teams.
    const row = createdByTokenId === undefined ? { name } : { name, created_by_token_id: createdByTokenId };
    const [team] = await trx('teams').insert(row).returning(['id', 'name']);
    const token = await createAdminSecret(trx, team.id, `${name} admin`);
    return { team: { id: team.id as string, name: team.name as string }, token };
  });
}
