import type { Knex } from 'knex';
import { createToken } from '../auth/tokens.service';

/** The team that `ADMIN_TOKEN` and the demo data belong to; fixed so every start-up finds it. */
export const DEFAULT_TEAM_ID = '00000000-0000-4000-8000-000000000001';

export async function ensureDefaultTeam(db: Knex): Promise<void> {
  await db('teams').insert({ id: DEFAULT_TEAM_ID, name: 'Default team' }).onConflict('id').ignore();
}

/** A new, empty team with its first admin token (whose secret is only in this answer). */
export async function createTeamWithAdmin(db: Knex, name: string) {
  return db.transaction(async (trx) => {
    const [team] = await trx('teams').insert({ name }).returning(['id', 'name']);
    const token = await createToken(trx, team.id, `${name} admin`, 'admin');
    return { team: { id: team.id as string, name: team.name as string }, token: token.token };
  });
}
