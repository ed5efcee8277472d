export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who is calling: the token's team scopes every query; the role gates every route. `expiresAt`
 * (epoch ms) is the token's expiry, if it has one: a cached caller is refused once it has passed.
 */
export type Actor = { teamId: string; role: Role; tokenId: string; tokenName: string; expiresAt?: number };

export function roleAllows(actual: Role, required: Role): boolean {
  return ROLES.indexOf(actual) >= ROLES.indexOf(required);
}
