import { LRUCache } from 'lru-cache';

/*
 * Rendered project lists, kept per instance and served again while the version of the project's
 * stored figures is the one they were rendered at (the key holds the day: finance.router.ts). The
 * version (list.sql.ts's findListedProject) is the project's revision and its figures' refresh
 * generation, and there is none while a write's marks are pending (freshness.ts), so a list read after
 * a write commits never comes from here: the check is part of the read of the project, which the list
 * needs anyway. Bounded by bytes; when full, the least recently used entries go (lru-cache); a body
 * over a quarter of the budget is not kept. Writes made outside
 * the service (SQL by hand) do not mark anything: restart the service, or set LIST_CACHE_MB=0.
 */
export type ListCache = {
  get(key: string, version: string): Buffer | undefined;
  set(key: string, version: string, body: Buffer): void;
};

export function createListCache(maxBytes: number): ListCache {
  if (maxBytes <= 0) return { get: () => undefined, set: () => undefined };
  const entries = new LRUCache<string, { version: string; body: Buffer }>({
    maxSize: maxBytes,
    maxEntrySize: Math.floor(maxBytes / 4),
    sizeCalculation: (entry) => Math.max(1, entry.body.length),
  });
  return {
    get(key, version) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.version === version) return entry.body;
      entries.delete(key);
      return undefined;
    },
    set(key, version, body) {
      // A body too large for maxEntrySize is not kept, and any older entry of the key goes with it.
      entries.set(key, { version, body });
    },
  };
}
