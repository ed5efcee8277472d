import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import knex, { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import type { Logger } from '../logger';
import { trackRequestQueries } from './request-queries';
import { boundReads } from './read-deadline';
import { PooledConnections, registerConnections } from './statements';

export type Db = Knex;

const OID = { INT8: 20, DATE: 1082 } as const;

/*
 * Both drivers must hand rows over in the same shape: numeric stays a string (parsed by the money
 * module), bigint becomes a number (only counts and second totals, far below 2^53), and a date stays
 * its ISO text instead of becoming a local-time Date.
 */
const parseInt8 = (value: string) => Number(value);
const keepText = (value: string) => value;

export type DatabaseTarget =
  | {
      kind: 'postgres';
      url: string;
      poolMax?: number;
      /** Server-side limits for each statement and each lock wait, in ms; 0 or absent: none. */
      statementTimeoutMs?: number;
      lockTimeoutMs?: number;
    }
  | { kind: 'pglite'; dataDir: string | undefined };

/** The configured database: a PostgreSQL server when DATABASE_URL is set, else PGlite in DATA_DIR. */
export function configuredTarget(config: {
  databaseUrl: string | undefined;
  dataDir: string;
  statementTimeoutMs?: number;
  lockTimeoutMs?: number;
}): DatabaseTarget {
  if (!config.databaseUrl) return { kind: 'pglite', dataDir: config.dataDir };
  return { kind: 'postgres', url: config.databaseUrl, statementTimeoutMs: config.statementTimeoutMs, lockTimeoutMs: config.lockTimeoutMs };
}

/** The same server without time limits, for migrations: a long data migration must not be cut off. */
export function withoutTimeLimits(target: DatabaseTarget): DatabaseTarget {
  return target.kind === 'postgres' ? { ...target, statementTimeoutMs: 0, lockTimeoutMs: 0, poolMax: 1 } : target;
}

/** How long a statement may go unanswered before its connection is given up: 5 s past the server's own limit (0: no limit). */
const readDeadlineMs = (target: Extract<DatabaseTarget, { kind: 'postgres' }>): number =>
  (target.statementTimeoutMs ?? 0) > 0 ? (target.statementTimeoutMs as number) + 5_000 : 0;

/*
 * Statements and lock waits are bounded on the server (statement_timeout, lock_timeout: the query is
 * cancelled there, not only abandoned by the client). A server that stops answering altogether (a
 * frozen connection) is bounded on the client a few seconds past the server's limit (readDeadlineMs,
 * db/read-deadline.ts).
 */
function sessionSettings(target: Extract<DatabaseTarget, { kind: 'postgres' }>): { options: string } {
  // random_page_cost 1.1: an index lookup costs about what a sequential read does when the data is
  // cached (PostgreSQL's default of 4 assumes spinning disks). At 4 the stored breakdown's read
  // scanned every project and every project's figures for each task (a seq scan of 200 rows looked
  // cheaper than one index lookup).
  const settings = ['-c jit=off', '-c random_page_cost=1.1'];
  const statementMs = target.statementTimeoutMs ?? 0;
  if (statementMs > 0) settings.push(`-c statement_timeout=${statementMs}`);
  if ((target.lockTimeoutMs ?? 0) > 0) settings.push(`-c lock_timeout=${target.lockTimeoutMs}`);
  return { options: settings.join(' ') };
}

export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'pglite') return `embedded PGlite (${target.dataDir ?? 'in memory'})`;
  const url = new URL(target.url);
  return `PostgreSQL ${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

/*
 * PGlite's shared_buffers default (128 MB) is resident from the start inside its WebAssembly memory;
 * 32 MB holds this service's working set, and the table files stay in the operating system's cache
 * (about 95 MB less RSS, measured in BENCHMARKS.md).
 */
const PGLITE_SETTINGS = ['-c', 'shared_buffers=32MB'];

/** knex's own warnings (lost connections, pool errors) go to pino instead of the console. */
function knexLog(logger: Logger | undefined): Knex.Config['log'] {
  if (!logger) return undefined;
  return {
    warn: (message: unknown) => logger.warn({ knex: String(message) }, 'database warning'),
    error: (message: unknown) => logger.error({ knex: String(message) }, 'database error'),
    deprecate: (message: unknown) => logger.warn({ knex: String(message) }, 'knex deprecation'),
    debug: (message: unknown) => logger.debug({ knex: String(message) }, 'knex debug'),
  };
}

export function createDb(target: DatabaseTarget, logger?: Logger): Db {
  if (target.kind === 'postgres') {
    const types = {
      getTypeParser(oid: number, format?: string) {
        if (oid === OID.INT8) return parseInt8;
        if (oid === OID.DATE) return keepText;
        return pg.types.getTypeParser(oid, format as 'text');
      },
    };
    const connections = new PooledConnections();
    const db = knex({
      client: 'pg',
      // No JIT: these are short statements over a few rows, but a recursive walk's estimated cost can
      // pass jit_above_cost, and compiling it took 28 ms of a 1 ms roll-up refresh (measured).
      connection: { connectionString: target.url, types, ...sessionSettings(target) } as Knex.PgConnectionConfig,
      pool: { min: 0, max: target.poolMax ?? 10, afterCreate: connections.afterCreate },
      // While the server is unreachable a request fails (503) within this bound instead of queueing.
      acquireConnectionTimeout: 10_000,
      log: knexLog(logger),
    });
    registerConnections(db, connections);
    return trackRequestQueries(boundReads(db, readDeadlineMs(target)));
  }
  if (target.dataDir) fs.mkdirSync(path.resolve(target.dataDir), { recursive: true });
  const pglite = new PGlite(target.dataDir ? path.resolve(target.dataDir) : undefined, {
    parsers: { [OID.INT8]: parseInt8, [OID.DATE]: keepText },
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS],
  });
  return knex({
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection: () => ({ pglite }) as object,
    log: knexLog(logger),
  });
}
