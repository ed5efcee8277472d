import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, DatabaseTarget } from '../../src/db/knex';

/** The PostgreSQL server the crash tests make their databases on. */
export const serverUrl = process.env.CRASH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A database of a crash test's own, made afresh: on PostgreSQL a new database `<prefix>_<time>` on the
 * server, on PGlite a data directory in a new temporary folder; `cleanup` drops or removes it.
 */
export async function scratchDatabase(kind: 'postgres' | 'pglite', prefix: string): Promise<{ target: DatabaseTarget; cleanup: () => Promise<void> }> {
  if (kind === 'postgres') {
    const name = `${prefix}_${Date.now()}`;
    const admin = createDb({ kind: 'postgres', url: serverUrl, poolMax: 1 });
    await admin.raw(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return {
      target: { kind: 'postgres', url: url.toString() },
      cleanup: async () => {
        await admin.raw(`drop database if exists ${name} with (force)`);
        await admin.destroy();
      },
    };
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix.replace(/_/g, '-')}-`));
  return { target: { kind: 'pglite', dataDir: path.join(root, 'data') }, cleanup: async () => fs.rmSync(root, { recursive: true, force: true }) };
}
