import { LRUCache } from 'lru-cache';

/*
 * Encoded bodies kept per instance under a version of what they were rendered from, for the list cache
 * (list-cache.ts) and the breakdown answer cache (answer-cache.ts). Bounded by bytes: when full, the
 * least recently used entries go (lru-cache), and a body over a quarter of the budget is not kept. A
 * cache with no budget keeps nothing, through the same methods.
 */
export type VersionedCache = {
  /** The body held for `key`, with its version. */
  held(key: string): { version: string; body: Buffer } | undefined;
  /** The body held for `key` when it is of `version`; one of another version is dropped. */
  get(key: string, version: string): Buffer | undefined;
  /** Keeps `body` for `key` when it is of `keptFromBytes` bytes or more; what was held for `key` goes either way. */
  keep(key: string, version: string, body: Buffer): void;
};

export type VersionedCacheOptions = {
  maxBytes: number;
  /** How long an entry is kept at most, from when it was stored (none by default). */
  keptForMs?: number;
  /** Bodies shorter than this are not kept. */
  keptFromBytes?: number;
};

const KEEPS_NOTHING: VersionedCache = { held: () => undefined, get: () => undefined, keep: () => undefined };

export function createVersionedCache({ maxBytes, keptForMs, keptFromBytes = 0 }: VersionedCacheOptions): VersionedCache {
  if (maxBytes <= 0) return KEEPS_NOTHING;
  const entries = new LRUCache<string, { version: string; body: Buffer }>({
    maxSize: maxBytes,
    maxEntrySize: Math.floor(maxBytes / 4),
    sizeCalculation: (entry) => Math.max(1, entry.body.length),
    ...(keptForMs === undefined ? {} : { ttl: keptForMs }),
  });
  return {
    held: (key) => entries.get(key),
    get(key, version) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.version === version) return entry.body;
      entries.delete(key);
      return undefined;
    },
    keep(key, version, body) {
      // A body too large for maxEntrySize, or too small to keep, is not kept, and any older entry of the
      // key goes with it: what is held is only ever the key's latest version.
      if (body.length >= keptFromBytes) entries.set(key, { version, body });
      else entries.delete(key);
    },
  };
}
