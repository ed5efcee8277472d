/*
 * Which rate holds for a member on a day (docs/finance-rules.md R22, and R26 for
 * the explanation that shows it): each of the two rates on its own, the member's own entry in force
 * if non-null, else its role's entry in the card if non-null, else none (0). Pure selection: no
 * arithmetic, amounts stay the exact text they were read as.
 */

/** A dated entry of a rate card's role or of a member's overrides: rates as exact text, null meaning none. */
export type DatedRateEntry = { effective_from: string; hourly_rate: string | null; bill_rate: string | null };

/** A dated project role of a member (section 3b rule 3): its first entry counts from the beginning of time. */
export type DatedRole = { job_role_id: string | null; effective_from: string };

export type RateKind = 'hourly_rate' | 'bill_rate';

/** Where a member's rate on a day comes from: its own entry, its role's, or none (0). */
export type RateSource = 'member' | 'role' | 'none';

/** A resolved rate: its amount ('0' for none), where it came from, and the day of the entry that decided (null for none). */
export type ResolvedRate = { amount: string; source: RateSource; effective_from: string | null };

/** The entry in force on `day`: the one with the latest `effective_from` on or before it (entries in any order). */
export function entryInForce<T extends { effective_from: string }>(entries: readonly T[], day: string): T | undefined {
  let found: T | undefined;
  for (const entry of entries) {
    if (entry.effective_from <= day && (!found || entry.effective_from > found.effective_from)) found = entry;
  }
  return found;
}

/** The member's role on `day`: the entry in force, or before every entry its first one (it counts from the beginning). */
export function roleOn(roles: readonly DatedRole[], day: string): DatedRole | undefined {
  const inForce = entryInForce(roles, day);
  if (inForce) return inForce;
  let first: DatedRole | undefined;
  for (const role of roles) if (!first || role.effective_from < first.effective_from) first = role;
  return first;
}

/**
 * One rate of a member on `day`: `own` are the member's override entries, `card` the card's entries of
 * its role on that day (empty without a role).
 */
export function resolveRate(kind: RateKind, own: readonly DatedRateEntry[], card: readonly DatedRateEntry[], day: string): ResolvedRate {
  const mine = entryInForce(own, day);
  const mineRate = mine?.[kind];
  if (mine && mineRate != null) return { amount: mineRate, source: 'member', effective_from: mine.effective_from };
  const roles = entryInForce(card, day);
  const roleRate = roles?.[kind];
  if (roles && roleRate != null) return { amount: roleRate, source: 'role', effective_from: roles.effective_from };
  return { amount: '0', source: 'none', effective_from: null };
}

/** Both rates of a member on `day`, each resolved on its own. */
export function resolveRates(own: readonly DatedRateEntry[], card: readonly DatedRateEntry[], day: string): Record<RateKind, ResolvedRate> {
  return { hourly_rate: resolveRate('hourly_rate', own, card, day), bill_rate: resolveRate('bill_rate', own, card, day) };
}
