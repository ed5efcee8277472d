/*
 * Rendered project lists, kept per instance and served again while the version of the project's
 * stored figures is the one they were rendered at (the key holds the day: finance.router.ts). The
 * version (list.sql.ts's findListedProject) is the project's revision and its figures' refresh
 * generation, and there is none while a write's marks are pending (freshness.ts), so a list read after
 * a write commits never comes from here: the check is part of the read of the project, which the list
 * needs anyway. Bounded by bytes; when full, the least recently used entries go. Writes made outside
 * the service (SQL by hand) do not mark anything: restart the service, or set LIST_CACHE_MB=0.
 */
export type ListCache = {
  get(key: string, version: string): Buffer | undefined;
  set(key: string, version: string, body: Buffer): void;
};

export function createListCache(maxBytes: number): ListCache {
  const entries = new Map<string, { revision: string; body: Buffer }>();
  let bytes = 0;
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.body.length;
    entries.delete(key);
  };
  return {
    get(key, version) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.revision !== version) {
        drop(key);
        return undefined;
      }
      entries.delete(key); // most recently used goes last
      entries.set(key, entry);
      return entry.body;
    },
    set(key, version, body) {
      drop(key);
      if (body.length > maxBytes / 4) return;
      while (bytes + body.length > maxBytes) drop(entries.keys().next().value as string);
      entries.set(key, { revision: version, body });
      bytes += body.length;
    },
  };
}
