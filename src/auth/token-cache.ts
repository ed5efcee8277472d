import type { Actor } from './roles';

/*
 * Recently authenticated tokens, so a request does not pay a database round trip for its token
 * (measured: a third of a breakdown's statements, and the difference between 31% and 44% of /healthz).
 * Only successful lookups are kept, for `ttlMs`; an unknown or revoked secret is looked up every time.
 * Keys are the secrets' SHA-256 hashes, never the secrets. The size is bounded: when full, the oldest
 * entry goes.
 *
 * Revocation acts at once (CONTRACT section 6): a token revoked through this instance is forgotten
 * here before the answer; one revoked through another instance or the token CLI is forgotten when
 * PostgreSQL's notification arrives (revocation-listener.ts). While that listener is not connected the
 * cache is suspended, so nothing cached can outlive a revocation it might have missed; `ttlMs` bounds
 * what a change made by hand in SQL can do.
 */
export type TokenCache = {
  get(hashHex: string): Actor | undefined;
  set(hashHex: string, actor: Actor): void;
  forgetToken(tokenId: string): void;
  /** Stops serving and keeping entries, and drops them all (revocations may be missed meanwhile). */
  suspend(): void;
  /** Serves and keeps entries again, from empty. */
  resume(): void;
};

export function createTokenCache(ttlMs: number, options: { maxEntries?: number; now?: () => number } = {}): TokenCache {
  const { maxEntries = 10_000, now = Date.now } = options;
  const entries = new Map<string, { actor: Actor; expires: number }>();
  let suspended = false;
  return {
    get(hashHex) {
      if (suspended) return undefined;
      const entry = entries.get(hashHex);
      if (!entry) return undefined;
      if (entry.expires > now()) return entry.actor;
      entries.delete(hashHex);
      return undefined;
    },
    set(hashHex, actor) {
      if (ttlMs <= 0 || suspended) return;
      entries.delete(hashHex);
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(hashHex, { actor, expires: now() + ttlMs });
    },
    forgetToken(tokenId) {
      for (const [key, entry] of entries) if (entry.actor.tokenId === tokenId) entries.delete(key);
    },
    suspend() {
      suspended = true;
      entries.clear();
    },
    resume() {
      entries.clear();
      suspended = false;
    },
  };
}
