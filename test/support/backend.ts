import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeIf, itIf } from './skip';

/*
 * Which database the integration suite runs on, decided once by the global setup and handed to the
 * test workers through the environment:
 *   TEST_DATABASE_URL set        -> a fresh database on that server, created and dropped per run;
 *   else a Docker engine answers -> a Testcontainers PostgreSQL 15;
 *   else                         -> embedded PGlite (one migrated template copied per test file).
 * TEST_DB=pglite forces PGlite without probing for Docker.
 */
export const BACKEND_ENV = 'PFS_TEST_BACKEND';
export const URL_ENV = 'PFS_TEST_URL';
export const TEMPLATE_ENV = 'PFS_TEST_PGLITE_TEMPLATE';

export type Backend = { kind: 'postgres'; url: string } | { kind: 'pglite'; templateDir: string };

export function backendFromEnv(): Backend {
  const kind = process.env[BACKEND_ENV];
  if (kind === 'postgres') return { kind, url: process.env[URL_ENV] as string };
  if (kind === 'pglite') return { kind, templateDir: process.env[TEMPLATE_ENV] as string };
  throw new Error('The integration backend is not set up: run the tests with jest (see jest.config.js)');
}

export function scratchDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** `describe` on a PostgreSQL server; on PGlite skipped, its title saying why (`reason`). */
export const describeOnPostgres = (reason: string) => describeIf(backendFromEnv().kind === 'postgres', `skipped on PGlite: ${reason}`);

/** `it` on a PostgreSQL server; on PGlite skipped, its title saying why (`reason`). */
export const itOnPostgres = (reason: string) => itIf(backendFromEnv().kind === 'postgres', `skipped on PGlite: ${reason}`);
