import type { Knex } from 'knex';
import { now } from '../clock';
import type { Logger } from '../logger';
import type { Actor } from './roles';
import { recordUse } from './tokens.repository';

/*
 * A token's last_used_at, to the minute, without a write per request: this instance remembers the
 * minute it last recorded for each token and writes only when a request comes in a later minute, in
 * the background (the request never waits for it; a failed write is tried again by the token's next
 * request). Cached tokens are recorded too: most requests never reach the database for their token.
 * So each token costs at most one statement a minute per instance, and an idle token none.
 * The memory is bounded: past `maxTokens`, the token recorded longest ago is forgotten (its next use
 * writes again, which is harmless).
 */
export type TokenUsage = {
  /** Notes a request by `actor`'s token. */
  used(actor: Actor): void;
  /** Settles when every write started so far has (tests, shutdown). */
  settled(): Promise<void>;
};

const MINUTE_MS = 60_000;

export function createTokenUsage(db: Knex, logger?: Logger, options: { maxTokens?: number } = {}): TokenUsage {
  const { maxTokens = 10_000 } = options;
  const recorded = new Map<string, number>();
  const writing = new Set<Promise<void>>();

  return {
    used(actor) {
      const minute = Math.floor(now().getTime() / MINUTE_MS) * MINUTE_MS;
      const last = recorded.get(actor.tokenId);
      if (last !== undefined && last >= minute) return;
      recorded.delete(actor.tokenId);
      if (recorded.size >= maxTokens) recorded.delete(recorded.keys().next().value as string);
      recorded.set(actor.tokenId, minute);
      const write = recordUse(db, actor.teamId, actor.tokenId, new Date(minute)).catch((err: unknown) => {
        if (recorded.get(actor.tokenId) === minute) recorded.delete(actor.tokenId);
        logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not record when a token was last used');
      });
      writing.add(write);
      void write.finally(() => writing.delete(write));
    },
    async settled() {
      await Promise.all([...writing]);
    },
  };
}
