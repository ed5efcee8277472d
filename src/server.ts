import type { Server } from 'node:http';
import v8 from 'node:v8';
import { createApp } from './app';
import { listenForRevocations } from './auth/revocation-listener';
import { createTokenCache } from './auth/token-cache';
import { createTokenUsage } from './auth/token-usage';
import { bootstrapAccess } from './bootstrap';
import { loadConfig } from './config';
import { Db, configuredTarget, createDb, describeTarget, withoutTimeLimits } from './db/knex';
import { migrateToLatest } from './db/migrate';
import { StartupError, openDatabase } from './db/open-database';
import { onRefreshed } from './finance/read-model/freshness';
import { createPartsFiller } from './finance/read-model/parts-fill';
import { createDrainer } from './finance/read-model/drainer';
import { createActivity } from './http/activity';
import { serverFor } from './http/express-server';
import { createLogger } from './logger';
import { ensureDefaultTeam } from './teams/teams.service';
import { printWelcome } from './welcome';
import { startWebhookWorker } from './webhooks/webhooks.worker';
import { DEFAULT_WEB_DIR } from './web/static';
import { findDemoIds, seedDemoIfEmpty } from '../seeds/demo';

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new StartupError(`Port ${port} on ${host} is already in use: stop what uses it or set PORT`));
      else if (err.code === 'EACCES') reject(new StartupError(`Port ${port} on ${host} needs privileges this process lacks: set PORT`));
      else if (err.code === 'EADDRNOTAVAIL') reject(new StartupError(`HOST ${host} is not an address of this machine`));
      else reject(err);
    });
  });
}

/** The breakdown parts filler works only after this long without an API request in flight. */
const QUIET_MS = 200;

/** Migrations run without the service's time limits; the embedded database has one connection only. */
async function migrate(target: ReturnType<typeof configuredTarget>, db: Db): Promise<string[]> {
  if (target.kind !== 'postgres') return migrateToLatest(db);
  const unlimited = createDb(withoutTimeLimits(target));
  try {
    return await migrateToLatest(unlimited);
  } finally {
    await unlimited.destroy();
  }
}

/*
 * Start-up order matters: everything that can fail (database, migrations, demo data, the port) comes
 * before a secret is created, so a failed first start leaves nothing that locks the user out; the
 * admin token is generated only once the service listens, and printed at once. /readyz answers 503
 * until all of it is done.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  // A recomputation or a preview allocates far faster than it keeps: with V8's own heuristics the heap
  // grew by hundreds of megabytes before a full collection found almost all of it garbage. Bounded
  // steps keep the resident size nearer what is alive, at the price of more full collections
  // (README, HEAP_GROWING_PERCENT; BENCHMARKS.md).
  if (config.heapGrowingPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  const logger = createLogger(config.logLevel);
  const target = configuredTarget(config);
  const database = await openDatabase(target, logger);
  const { db } = database;
  let server: Server | undefined;
  try {
    const applied = await migrate(target, db);
    logger.info({ database: describeTarget(target), migrations: applied }, 'database ready');
    await ensureDefaultTeam(db);
    const demo = (config.seedDemo ? await seedDemoIfEmpty(db) : undefined) ?? (await findDemoIds(db));

    // On a PostgreSQL server other instances and the token CLI may revoke tokens: listen for them. An
    // embedded database is owned by this process alone, so revocations can only come through it.
    const tokenCache = createTokenCache(config.tokenCacheSeconds * 1000);
    const revocations = target.kind === 'postgres' ? listenForRevocations(target.url, tokenCache, logger) : undefined;
    let started = false;
    const activity = createActivity();
    const tokenUsage = createTokenUsage(db, logger);
    const app = createApp({
      activity,
      db,
      logger,
      rateLimitPerMinute: config.rateLimitPerMinute,
      tokenCache,
      tokenUsage,
      listCacheMb: config.listCacheMb,
      breakdownCacheMb: config.breakdownCacheMb,
      listRenders: config.listRenders,
      teamRenders: { perTeam: config.teamListRenders, queuePerTeam: config.teamListQueue },
      clientStallMs: config.clientStallTimeoutMs,
      refreshBehindBreakdowns: true,
      servedOverHttps: config.servedOverHttps,
      teamShare: config.teamConcurrency > 0 ? { perTeam: config.teamConcurrency, queuePerTeam: config.teamQueue } : undefined,
      corsOrigins: config.corsOrigins,
      metricsToken: config.metricsToken,
      trustProxy: config.trustProxy,
      webDir: DEFAULT_WEB_DIR,
      isStarted: () => started,
      webhookAllowPrivate: config.webhookAllowPrivate,
    });
    server = serverFor(app).listen(config.port, config.host);
    await listen(server, config.port, config.host);
    const access = await bootstrapAccess(db, config.adminToken);
    if (access.adminTokenRevoked) logger.warn('ADMIN_TOKEN was revoked (through the API or a rotation) and stays revoked: set a new secret to administer the default team');
    started = true;
    // Breakdown parts a project-wide refresh leaves empty are filled in behind it (finance/read-model/parts-fill.ts).
    const filler = createPartsFiller(db, logger, { quiet: () => activity.quietFor(QUIET_MS) });
    onRefreshed(db, filler.refreshed);
    // Marks left by writes drained in the background, so reads do not pay for a burst of writes.
    const drainer = createDrainer(db, logger, { quiet: () => activity.quietFor(0) });
    // Webhook deliveries, in the background; stopped before the database closes.
    const webhooks = startWebhookWorker({ db, logger, allowPrivate: config.webhookAllowPrivate });
    void filler.scheduleOutdated().catch((err: unknown) => logger.warn({ err }, 'could not look for breakdown parts to fill'));

    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const baseUrl = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    logger.info({ url: baseUrl }, 'listening');
    printWelcome({ baseUrl, generatedAdminToken: access.generatedAdminToken, adminTokenFromEnv: Boolean(config.adminToken) && !access.adminTokenRevoked, demo });
    handleSignals(server, async () => {
      await drainer.stop();
      await filler.stop();
      await tokenUsage.settled();
      await webhooks.stop();
      await revocations?.close();
      await database.close();
    }, logger);
  } catch (err) {
    server?.close();
    await database.close().catch(() => undefined);
    throw err;
  }
}

function handleSignals(server: Server, closeResources: () => Promise<void>, logger: ReturnType<typeof createLogger>): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    server.close(async () => {
      await closeResources();
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

// One line and a non-zero exit; the stack only when asked for (LOG_LEVEL=debug or trace).
main().catch((err: unknown) => {
  const verbose = ['debug', 'trace'].includes(process.env.LOG_LEVEL ?? '');
  console.error(`Start-up failed: ${err instanceof Error ? err.message : String(err)}`);
  if (verbose && err instanceof Error && !(err instanceof StartupError)) console.error(err.stack);
  process.exit(1);
});
