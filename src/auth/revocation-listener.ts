import pg from 'pg';
import type { Logger } from '../logger';
import type { TokenCache } from './token-cache';

/** The channel tokens.repository's revokeToken notifies, with the token id as payload. */
export const REVOCATION_CHANNEL = 'api_token_revoked';

export type RevocationListener = {
  /** Settles once the first connection listens (the cache serves from then on). */
  ready: Promise<void>;
  close(): Promise<void>;
};

/**
 * Keeps one PostgreSQL connection LISTENing for token revocations made by any instance or by the token
 * CLI, and forgets each revoked token from this instance's cache as its notification arrives. The cache
 * is suspended until the connection listens and whenever it drops (then it reconnects, waiting 1 s,
 * doubling up to 30 s), so a revocation sent while nobody listened cannot be missed.
 */
export function listenForRevocations(url: string, cache: TokenCache, logger: Logger): RevocationListener {
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = 1000;
  let timer: NodeJS.Timeout | undefined;
  let listening: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (listening = resolve));

  /** Lets go of the current connection, if any, without reacting to its end. */
  const drop = async () => {
    const current = client;
    client = undefined;
    current?.removeAllListeners();
    await current?.end().catch(() => undefined);
  };

  const lost = (err?: Error) => {
    cache.suspend();
    void drop();
    if (closed) return;
    logger.warn({ err: err?.message, retryInMs: retryMs }, 'token revocation listener disconnected; token cache suspended');
    timer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 30_000);
  };

  const connect = async () => {
    const candidate = new pg.Client({ connectionString: url });
    client = candidate;
    candidate.on('error', lost);
    candidate.on('end', () => client === candidate && lost(new Error('connection ended')));
    candidate.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL && message.payload) cache.forgetToken(message.payload);
    });
    try {
      await candidate.connect();
      await candidate.query(`LISTEN ${REVOCATION_CHANNEL}`);
      if (client !== candidate || closed) return;
      retryMs = 1000;
      cache.resume();
      listening();
    } catch (err) {
      if (client === candidate) lost(err as Error);
    }
  };

  cache.suspend();
  void connect();
  return {
    ready,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      cache.suspend();
      await drop();
    },
  };
}
