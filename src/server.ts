import type { Server } from 'node:http';
import { createApp } from './app';
import { listenForRevocations } from './auth/revocation-listener';
import { createTokenCache } from './auth/token-cache';
import { bootstrapAccess } from './bootstrap';
import { loadConfig } from './config';
import { configuredTarget, createDb, describeTarget } from './db/knex';
import { migrateToLatest } from './db/migrate';
import { createLogger } from './logger';
import { printWelcome } from './welcome';
import { findDemoIds, seedDemoIfEmpty } from '../seeds/demo';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const target = configuredTarget(config);
  const db = createDb(target, logger);

  const applied = await migrateToLatest(db);
  logger.info({ database: describeTarget(target), migrations: applied }, 'database ready');
  const access = await bootstrapAccess(db, config.adminToken);
  const demo = (config.seedDemo ? await seedDemoIfEmpty(db) : undefined) ?? (await findDemoIds(db));

  // On a PostgreSQL server other instances and the token CLI may revoke tokens: listen for them. PGlite
  // is opened by this process alone, so revocations can only come through this instance.
  const tokenCache = createTokenCache(config.tokenCacheSeconds * 1000);
  const revocations = target.kind === 'postgres' ? listenForRevocations(target.url, tokenCache, logger) : undefined;
  const app = createApp({ db, logger, rateLimitPerMinute: config.rateLimitPerMinute, tokenCache, listCacheMb: config.listCacheMb, listRenders: config.listRenders });
  const server: Server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logger.info({ url: baseUrl }, 'listening');
  printWelcome({ baseUrl, generatedAdminToken: access.generatedAdminToken, adminTokenFromEnv: Boolean(config.adminToken), demo });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    server.close(async () => {
      await revocations?.close();
      await db.destroy();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => {
      logger.error('in-flight requests did not finish within 10 s; exiting');
      process.exit(1);
    }, 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error('Start-up failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
