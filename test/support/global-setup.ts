import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createDb } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { BACKEND_ENV, TEMPLATE_ENV, URL_ENV, scratchDir } from './backend';

type Teardown = () => Promise<void>;
declare global {
  // Read by global-teardown.ts, which runs in the same process.
  var __PFS_TEARDOWN__: Teardown | undefined;
}

async function migrate(target: Parameters<typeof createDb>[0]): Promise<void> {
  const db = createDb(target);
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}

async function freshDatabaseOn(serverUrl: string): Promise<void> {
  const name = `pfs_test_${Date.now()}_${process.pid}`;
  const admin = createDb({ kind: 'postgres', url: serverUrl, poolMax: 1 });
  await admin.raw(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await migrate({ kind: 'postgres', url: url.toString() });
  process.env[BACKEND_ENV] = 'postgres';
  process.env[URL_ENV] = url.toString();
  console.log(`\nIntegration tests on PostgreSQL ${url.host}, database ${name} (dropped afterwards)`);
  globalThis.__PFS_TEARDOWN__ = async () => {
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
  };
}

/** Probed in a child process: a failed probe leaves testcontainers' handles open, which would keep jest alive. */
function dockerAnswers(): boolean {
  const probe = spawnSync(
    process.execPath,
    ['-e', "require('testcontainers').getContainerRuntimeClient().then(() => process.exit(0), () => process.exit(1))"],
    { timeout: 20_000, stdio: 'ignore' },
  );
  return probe.status === 0;
}

async function testcontainer(): Promise<void> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:15-alpine').start();
  const url = container.getConnectionUri();
  await migrate({ kind: 'postgres', url });
  process.env[BACKEND_ENV] = 'postgres';
  process.env[URL_ENV] = url;
  console.log('\nIntegration tests on a Testcontainers PostgreSQL 15');
  globalThis.__PFS_TEARDOWN__ = async () => {
    await container.stop();
  };
}

async function pgliteTemplate(): Promise<void> {
  const root = scratchDir('pfs-test-');
  const templateDir = `${root}/template`;
  await migrate({ kind: 'pglite', dataDir: templateDir });
  process.env[BACKEND_ENV] = 'pglite';
  process.env[TEMPLATE_ENV] = templateDir;
  console.log('\nIntegration tests on embedded PGlite');
  globalThis.__PFS_TEARDOWN__ = async () => fs.rmSync(root, { recursive: true, force: true });
}

export default async function globalSetup(): Promise<void> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) return freshDatabaseOn(serverUrl);
  if (process.env.TEST_DB !== 'pglite' && dockerAnswers()) return testcontainer();
  return pgliteTemplate();
}
