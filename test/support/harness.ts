import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../src/app';
import { answerCacheSettings } from '../../src/finance/read-model/answer-cache';
import { createDb, Db } from '../../src/db/knex';
import { migrateToLatest } from '../../src/db/migrate';
import { createLogger, Logger } from '../../src/logger';
import { createTeamWithAdmin } from '../../src/teams/teams.service';
import { backendFromEnv, scratchDir } from './backend';
import { checkResponseAgainstDocument } from './openapi-responses';

/** Checks a request's response against the OpenAPI document (status listed, body matching). */
export function documented(test: request.Test): request.Test {
  return test.expect((res) => {
    const { req } = res as unknown as { req: { method: string; path: string } };
    checkResponseAgainstDocument(req.method, req.path, res.status, res.headers['content-type'], res.body);
  });
}

/**
 * Requests through the real Express app (or to a service's base URL, another process), with a bearer
 * token (or none); every response is checked.
 */
export class Api {
  constructor(
    readonly app: Express | string,
    readonly token: string | undefined,
  ) {}

  as(token: string | undefined): Api {
    return new Api(this.app, token);
  }

  /** Adds the token, and checks the response against the OpenAPI document. */
  private authorised(test: request.Test): request.Test {
    const checked = documented(test);
    return this.token ? checked.set('Authorization', `Bearer ${this.token}`) : checked;
  }

  get(url: string) {
    return this.authorised(request(this.app).get(url));
  }
  delete(url: string) {
    return this.authorised(request(this.app).delete(url));
  }
  post(url: string, body?: unknown) {
    const test = this.authorised(request(this.app).post(url));
    return body === undefined ? test : test.send(body as object);
  }
  put(url: string, body?: unknown) {
    const test = this.authorised(request(this.app).put(url));
    return body === undefined ? test : test.send(body as object);
  }
  patch(url: string, body?: unknown) {
    const test = this.authorised(request(this.app).patch(url));
    return body === undefined ? test : test.send(body as object);
  }
}

export type Harness = {
  db: Db;
  app: Express;
  /** An admin of a team of this test file's own, so files never see each other's data. */
  api: Api;
  teamId: string;
  close(): Promise<void>;
};

/**
 * A fresh, migrated database of its own on the suite's PostgreSQL server, dropped by `drop`: for a test
 * that checks every row of every team, which other test files write to meanwhile in the shared one.
 */
async function ownDatabaseOn(suiteUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `pfs_own_${Date.now()}_${process.pid}_${randomUUID().slice(0, 8)}`;
  const admin = createDb({ kind: 'postgres', url: suiteUrl, poolMax: 1 });
  await admin.raw(`create database ${name}`);
  const url = new URL(suiteUrl);
  url.pathname = `/${name}`;
  const db = createDb({ kind: 'postgres', url: url.toString(), poolMax: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  return {
    url: url.toString(),
    drop: async () => {
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}

/**
 * Opens the suite's database (see backend.ts) and a fresh team in it. With `ownDatabase`, a database no
 * other test file writes to (on PGlite every file has its own copy anyway).
 */
export async function startHarness(opts: { logger?: Logger; rateLimitPerMinute?: number; ownDatabase?: boolean } = {}): Promise<Harness> {
  const backend = backendFromEnv();
  let cleanup: () => void | Promise<void> = () => {};
  let db: Db;
  if (backend.kind === 'postgres' && opts.ownDatabase) {
    const own = await ownDatabaseOn(backend.url);
    db = createDb({ kind: 'postgres', url: own.url });
    cleanup = own.drop;
  } else if (backend.kind === 'postgres') {
    db = createDb({ kind: 'postgres', url: backend.url });
  } else {
    const root = scratchDir('pfs-test-db-');
    const dataDir = path.join(root, 'data');
    fs.cpSync(backend.templateDir, dataDir, { recursive: true });
    db = createDb({ kind: 'pglite', dataDir });
    cleanup = () => fs.rmSync(root, { recursive: true, force: true });
  }
  answerCacheSettings.keptFromBytes = 0;
  const app = createApp({
    db,
    logger: opts.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    rateLimitPerMinute: opts.rateLimitPerMinute,
    // Revocations through the API are tested with the cache on. An hour rather than production's 5 s:
    // an entry that expired mid-test on a slow machine would add a statement where one is counted.
    tokenCacheSeconds: 3600,
    // As in production: every list a test reads after a write must come fresh from the database.
    listCacheMb: 32,
    // On, and keeping every answer (production keeps those of 32 KB and more): any breakdown a test
    // reads twice may come from it, if nothing changed.
    breakdownCacheMb: 16,
  });
  const { team, token } = await createTeamWithAdmin(db, `test team ${randomUUID()}`);
  return {
    db,
    app,
    api: new Api(app, token),
    teamId: team.id,
    close: async () => {
      await db.destroy();
      await cleanup();
    },
  };
}
