import { LRUCache } from 'lru-cache';
import type { Actor } from './roles';

/*
 * Recently authenticated tokens, so a request does not pay a database round trip for its token
 * (measured: a third of a breakdown's statements, and the difference between 31% and 44% of /healthz).
 * Only successful lookups are kept, for `ttlMs`; an unknown or revoked secret is looked up every time.
 * Keys are the secrets' SHA-256 hashes, never the secrets. The size is bounded: when full, the least
 * recently used entry goes (lru-cache, which also expires entries).
 *
 * Revocation acts at once (docs/operations.md, Tokens): a token revoked through this instance is forgotten
 * here before the answer; one revoked through another instance or the token CLI is forgotten when
 * PostgreSQL's notification arrives (revocation-listener.ts). While that listener is not connected the
 * cache is suspended, so nothing cached can outlive a revocation it might have missed; `ttlMs` bounds
 * what a change made by hand in SQL can do.
 *
 * A lookup that was in flight when a revocation (or a suspension) arrived is not cached: every
 * forgetToken, suspend and resume starts a new generation, and `lookup` keeps a result only if the
 * generation is still the one its lookup started in. Concurrent misses for one token in one generation
 * share one lookup; a miss after a revocation never joins a lookup started before it.
 */
export type TokenCache = {
  get(hashHex: string): Actor | undefined;
  /** Keeps `actor` as it is now (no lookup in flight: prefer `lookup`). */
  set(hashHex: string, actor: Actor): void;
  /** The cached caller, or `load`'s answer (shared by concurrent misses), kept as `set` would. */
  lookup(hashHex: string, load: () => Promise<Actor | undefined>): Promise<Actor | undefined>;
  forgetToken(tokenId: string): void;
  /** Stops serving and keeping entries, and drops them all (revocations may be missed meanwhile). */
  suspend(): void;
  /** Serves and keeps entries again, from empty. */
  resume(): void;
};

export function createTokenCache(ttlMs: number, options: { maxEntries?: number; now?: () => number } = {}): TokenCache {
  const { maxEntries = 10_000, now = Date.now } = options;
  // ttlResolution 0: every read asks the clock (the cache's own memo of "now" would hide a moved clock).
  const entries = ttlMs > 0 ? new LRUCache<string, Actor>({ max: maxEntries, ttl: ttlMs, ttlResolution: 0, perf: { now } }) : undefined;
  const inFlight = new Map<string, { generation: number; answer: Promise<Actor | undefined> }>();
  let generation = 0;
  let suspended = false;

  const cached = (hashHex: string): Actor | undefined => {
    const actor = suspended ? undefined : entries?.get(hashHex);
    // A token is expired from its expires_at on (lru-cache keeps an entry through its ttl's last instant).
    return actor && (actor.expiresAt ?? Infinity) > now() ? actor : undefined;
  };
  const keep = (hashHex: string, actor: Actor, since: number | undefined) => {
    if (!entries || suspended || since !== generation) return;
    // Never past the token's own expiry (requireToken checks it too, by the service clock).
    const left = (actor.expiresAt ?? Infinity) - now();
    if (left <= 0) return;
    entries.set(hashHex, actor, left < ttlMs ? { ttl: Math.max(1, Math.floor(left)) } : undefined);
  };
  const nextGeneration = () => {
    generation++;
  };

  return {
    get: cached,
    set(hashHex, actor) {
      keep(hashHex, actor, generation);
    },
    lookup(hashHex, load) {
      const actor = cached(hashHex);
      if (actor) return Promise.resolve(actor);
      const running = inFlight.get(hashHex);
      if (running && running.generation === generation) return running.answer;
      const since = generation;
      const answer = load().then((found) => {
        if (found) keep(hashHex, found, since);
        return found;
      });
      const entry = { generation: since, answer };
      inFlight.set(hashHex, entry);
      const done = () => {
        if (inFlight.get(hashHex) === entry) inFlight.delete(hashHex);
      };
      answer.then(done, done);
      return answer;
    },
    forgetToken(tokenId) {
      nextGeneration();
      if (!entries) return;
      const revoked = [...entries.entries()].filter(([, actor]) => actor.tokenId === tokenId).map(([key]) => key);
      for (const key of revoked) entries.delete(key);
    },
    suspend() {
      nextGeneration();
      suspended = true;
      entries?.clear();
    },
    resume() {
      nextGeneration();
      entries?.clear();
      suspended = false;
    },
  };
}
