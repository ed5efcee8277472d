/*
 * Rendered project lists, kept per instance and served again while the project's revision is the
 * one they were computed at (the key holds the day: finance.router.ts). Every write to a project bumps
 * its revision in the write's transaction (projects.repository's lockProject), so a list read after a
 * write commits never comes from here:
 * the check costs one indexed read of the project, which the list needs anyway. Bounded by bytes;
 * when full, the least recently used entries go. Writes made outside the service (SQL by hand) do not
 * bump the revision: restart the service, or set LIST_CACHE_MB=0.
 */
export type ListCache = {
  get(key: string, revision: number): Buffer | undefined;
  set(key: string, revision: number, body: Buffer): void;
};

export function createListCache(maxBytes: number): ListCache {
  const entries = new Map<string, { revision: number; body: Buffer }>();
  let bytes = 0;
  const drop = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.body.length;
    entries.delete(key);
  };
  return {
    get(key, revision) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.revision !== revision) {
        drop(key);
        return undefined;
      }
      entries.delete(key); // most recently used goes last
      entries.set(key, entry);
      return entry.body;
    },
    set(key, revision, body) {
      drop(key);
      if (body.length > maxBytes / 4) return;
      while (bytes + body.length > maxBytes) drop(entries.keys().next().value as string);
      entries.set(key, { revision, body });
      bytes += body.length;
    },
  };
}
