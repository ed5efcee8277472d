import { VersionedCache, createVersionedCache } from './versioned-cache';

/*
 * Rendered project lists, kept per instance and served again while the version of the project's
 * stored figures is the one they were rendered at (the key holds the day: finance.router.ts). The
 * version (list.sql.ts's findListedProject) is the project's revision and its figures' refresh
 * generation, and there is none while a write's marks are pending (freshness.ts), so a list read after
 * a write commits never comes from here: the check is part of the read of the project, which the list
 * needs anyway. Bounded by bytes (versioned-cache.ts). Writes made outside
 * the service (SQL by hand) do not mark anything: restart the service, or set LIST_CACHE_MB=0.
 */
export type ListCache = VersionedCache;

export const createListCache = (maxBytes: number): ListCache => createVersionedCache({ maxBytes });
