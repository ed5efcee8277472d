import type { Knex } from 'knex';
import { countActiveAdmins, installAdminToken } from './auth/tokens.repository';
import { createToken, hashSecret } from './auth/tokens.service';
import { DEFAULT_TEAM_ID, ensureDefaultTeam } from './teams/teams.service';

export type BootstrapResult = {
  /** A freshly generated admin token: shown once by the caller, never stored in clear. */
  generatedAdminToken?: string;
  /** ADMIN_TOKEN's secret was revoked (through the API or a rotation) and stays so: it does not authenticate. */
  adminTokenRevoked?: boolean;
};

/**
 * Makes sure the default team exists and that somebody can administer it. ADMIN_TOKEN's secret
 * replaces the one a previous start installed (tokens.repository.ts, installAdminToken).
 */
export async function bootstrapAccess(db: Knex, adminToken: string | undefined): Promise<BootstrapResult> {
  await ensureDefaultTeam(db);
  if (adminToken) {
    const { revoked } = await installAdminToken(db, DEFAULT_TEAM_ID, 'ADMIN_TOKEN', hashSecret(adminToken));
    return revoked ? { adminTokenRevoked: true } : {};
  }
  if ((await countActiveAdmins(db, DEFAULT_TEAM_ID)) > 0) return {};
  const created = await createToken(db, DEFAULT_TEAM_ID, 'bootstrap admin', 'admin');
  return { generatedAdminToken: created.token };
}
