import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../logger';
import { claimDataDir } from './data-dir-owner';
import { DatabaseTarget, Db, createDb, describeTarget } from './knex';
import { initialiseDataDir } from './pglite-init';

/** A start-up failure the user can act on: printed as its one-line message, without a stack. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

export type OpenDatabase = { db: Db; close: () => Promise<void> };

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a parent is not a directory',
  ENOSPC: 'no space left on device',
  EEXIST: 'exists and is not a directory',
};

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return (code && REASONS[code]) ?? (err instanceof Error ? err.message : String(err));
}

/** `mkdir -p`, by hand: Node's recursive mkdir never returns for a path under /proc (libuv loops on ENOENT). */
function makeDirectory(dir: string): void {
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = path.dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw err;
    makeDirectory(parent);
    fs.mkdirSync(dir);
  }
}

/**
 * Makes sure the data directory exists and can be written before PGlite sees it: PGlite reports an
 * unwritable directory as `ErrnoError { errno: 2 }` after a long time, and on some pseudo file
 * systems (/proc) it hangs instead of failing.
 */
function prepareDataDir(dataDir: string): void {
  try {
    makeDirectory(dataDir);
  } catch (err) {
    throw new StartupError(`DATA_DIR ${dataDir} cannot be created: ${reason(err)}`);
  }
  if (!fs.statSync(dataDir).isDirectory()) throw new StartupError(`DATA_DIR ${dataDir} is not a directory`);
  const probe = path.join(dataDir, `.write-probe-${process.pid}`);
  try {
    fs.writeFileSync(probe, 'probe');
    if (fs.readFileSync(probe, 'utf8') !== 'probe') throw new Error('what was written could not be read back');
  } catch (err) {
    throw new StartupError(`DATA_DIR ${dataDir} is not writable: ${reason(err)}`);
  } finally {
    fs.rmSync(probe, { force: true });
  }
}

const PG_REASONS: Record<string, (url: URL) => string> = {
  ECONNREFUSED: (url) => `nothing accepts connections on ${url.hostname}:${url.port || '5432'}`,
  ENOTFOUND: (url) => `host ${url.hostname} not found`,
  EAI_AGAIN: (url) => `host ${url.hostname} could not be resolved`,
  ETIMEDOUT: (url) => `no answer from ${url.hostname}:${url.port || '5432'}`,
};

const CONNECT_TIMEOUT_MS = 15_000;

/*
 * The server's own words are clear for a wrong database, role or password (SQLSTATE 3D000, 28000,
 * 28P01); network failures are said in terms of the configured address.
 */
/** One connection first, so a wrong address or credential is one clear line, not a pool's warnings. */
async function checkServer(target: Extract<DatabaseTarget, { kind: 'postgres' }>): Promise<void> {
  const url = new URL(target.url);
  const client = new pg.Client({ connectionString: target.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    const code = (err as { code?: string }).code;
    const timedOut = err instanceof Error && /timeout/i.test(err.message);
    const explain = code ? PG_REASONS[code] : timedOut ? PG_REASONS.ETIMEDOUT : undefined;
    const detail = explain ? explain(url) : err instanceof Error ? err.message : String(err);
    throw new StartupError(`Cannot use ${describeTarget(target)}: ${detail}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Opens the configured database for this process: the PostgreSQL server after one checked connection,
 * or the embedded data directory after claiming it (one process per directory). Used by the service
 * and by every command-line tool, so all of them refuse a directory that another process owns.
 */
export async function openDatabase(target: DatabaseTarget, logger?: Logger): Promise<OpenDatabase> {
  if (target.kind === 'postgres') {
    await checkServer(target);
    const db = createDb(target, logger);
    return { db, close: () => db.destroy() };
  }
  if (!target.dataDir) {
    const db = createDb(target, logger);
    return { db, close: () => db.destroy() };
  }
  const dataDir = path.resolve(target.dataDir);
  prepareDataDir(dataDir);
  const claim = await claimDataDir(dataDir);
  let db: Db | undefined;
  const close = async () => {
    await db?.destroy();
    await claim.release();
  };
  try {
    // A new directory is created in a child process, so this one never holds initdb's memory.
    await initialiseDataDir(dataDir);
    db = createDb({ kind: 'pglite', dataDir }, logger);
    await db.raw('select 1');
  } catch (err) {
    await close().catch(() => undefined);
    throw new StartupError(`DATA_DIR ${dataDir} could not be opened as a database: ${reason(err)}`);
  }
  return { db: db as Db, close };
}
