import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import knex, { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import type { Logger } from '../logger';

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
  | { kind: 'postgres'; url: string; poolMax?: number }
  | { kind: 'pglite'; dataDir: string | undefined };

/** The configured database: a PostgreSQL server when DATABASE_URL is set, else PGlite in DATA_DIR. */
export function configuredTarget(config: { databaseUrl: string | undefined; dataDir: string }): DatabaseTarget {
  return config.databaseUrl ? { kind: 'postgres', url: config.databaseUrl } : { kind: 'pglite', dataDir: config.dataDir };
}

export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'pglite') return `embedded PGlite (${target.dataDir ?? 'in memory'})`;
  const url = new URL(target.url);
  return `PostgreSQL ${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

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
    return knex({
      client: 'pg',
      // No JIT: these are short statements over a few rows, but a recursive walk's estimated cost can
      // pass jit_above_cost, and compiling it took 28 ms of a 1 ms roll-up refresh (measured).
      connection: { connectionString: target.url, types, options: '-c jit=off' } as Knex.PgConnectionConfig,
      pool: { min: 0, max: target.poolMax ?? 10 },
      // While the server is unreachable a request fails (503) within this bound instead of queueing.
      acquireConnectionTimeout: 10_000,
      log: knexLog(logger),
    });
  }
  if (target.dataDir) fs.mkdirSync(path.resolve(target.dataDir), { recursive: true });
  const pglite = new PGlite(target.dataDir ? path.resolve(target.dataDir) : undefined, {
    parsers: { [OID.INT8]: parseInt8, [OID.DATE]: keepText },
  });
  return knex({
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection: () => ({ pglite }) as object,
    log: knexLog(logger),
  });
}
