import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

/*
 * The deployment files, read as Docker would (no engine runs here). The YAML parser and the Compose
 * specification's JSON schema come with testcontainers (its docker-compose dependency); semver with jest.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
const YAML = require('yaml') as { parse(text: string, options: { merge: boolean }): unknown };
const semver = require('semver') as { satisfies(version: string, range: string): boolean };
/* eslint-enable @typescript-eslint/no-require-imports */

const ROOT = path.join(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

type Service = { environment: Record<string, string>; depends_on?: Record<string, { condition: string }>; volumes?: string[]; command?: string[] };
type Compose = { services: Record<string, Service> };

const composeText = read('docker-compose.yml');
/** Compose interpolates ${NAME:?message} and ${NAME:-default}: stand-in values, as when the env file sets them. */
const compose = YAML.parse(composeText.replace(/\$\{(\w+)(?::?[-?][^}]*)?\}/g, (_, name: string) => `<${name}>`), { merge: true }) as Compose;
const { db, migrate, service } = compose.services as Record<'db' | 'migrate' | 'service', Service>;

describe('docker-compose.yml', () => {
  it('follows the Compose specification', () => {
    const schema = JSON.parse(read('node_modules/docker-compose/schema/compose-spec.json'));
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    // PORT is an integer in the ports mapping once interpolated.
    const interpolated = YAML.parse(composeText.replace(/\$\{(\w+)(?::?[-?][^}]*)?\}/g, (_, name: string) => (name === 'PORT' ? '3000' : 'x')), { merge: true });
    expect(ajv.validate(schema, interpolated) ? [] : ajv.errors).toEqual([]);
  });

  it('takes every password from the env file, and refuses to start without one', () => {
    expect(db.environment.POSTGRES_PASSWORD).toBe('<POSTGRES_PASSWORD>');
    expect(db.environment.SERVICE_DB_PASSWORD).toBe('<SERVICE_DB_PASSWORD>');
    for (const name of ['POSTGRES_PASSWORD', 'SERVICE_DB_PASSWORD']) {
      // Every use is ${NAME:?...}: compose stops with the message when the variable is not set.
      expect(composeText.match(new RegExp(`\\$\\{${name}[^}]*\\}`, 'g'))?.every((use) => use.startsWith(`\${${name}:?`))).toBe(true);
    }
    const required = [...composeText.matchAll(/\$\{(\w+):\?/g)].map((m) => m[1]);
    const example = read('compose.env.example');
    for (const name of new Set(required)) expect(example).toMatch(new RegExp(`^${name}=`, 'm'));
    expect(read('.gitignore').split('\n')).toContain('compose.env');
  });

  it('serves as a role that only reads and writes rows; the owner runs the migrations first', () => {
    expect(service.environment.DATABASE_URL).toBe('postgres://finance_service@db:5432/project_finance');
    expect(service.environment.PGPASSWORD).toBe('<SERVICE_DB_PASSWORD>');
    expect(JSON.stringify(service)).not.toContain('POSTGRES_PASSWORD');
    expect(migrate.environment.DATABASE_URL).toBe(`postgres://${db.environment.POSTGRES_USER}@db:5432/${db.environment.POSTGRES_DB}`);
    expect(migrate.environment.PGPASSWORD).toBe('<POSTGRES_PASSWORD>');
    expect(migrate.command).toEqual(['node', 'dist/src/db/migrate-cli.js']);
    expect(service.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });

    expect(db.volumes).toContain('./docker/postgres-init:/docker-entrypoint-initdb.d:ro');
    const init = read('docker/postgres-init/10-service-role.sh');
    expect(init).toContain('CREATE ROLE finance_service LOGIN');
    expect(init).toContain('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO finance_service;');
    expect(init).toMatch(/ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO finance_service;/);
    expect(init).not.toMatch(/GRANT (ALL|CREATE|TRUNCATE)/i);
    expect(fs.statSync(path.join(ROOT, 'docker/postgres-init/10-service-role.sh')).mode & 0o111).not.toBe(0);
  });

  it('leaves the demo data out', () => {
    expect(service.environment.SEED_DEMO).toBe('<SEED_DEMO>');
    expect(composeText).toContain('SEED_DEMO: ${SEED_DEMO:-false}');
    expect(read('compose.env.example')).toMatch(/^SEED_DEMO=false$/m);
  });
});

describe('Dockerfile', () => {
  it('builds and runs on one exact Node 24 release, which engines allows', () => {
    const dockerfile = read('Dockerfile');
    const image = /^ARG NODE_IMAGE=node:(\d+)\.(\d+)\.(\d+)-bookworm-slim$/m.exec(dockerfile);
    expect(image?.[1]).toBe('24');
    expect(dockerfile.match(/^FROM .*/gm)).toEqual(['FROM ${NODE_IMAGE} AS build', 'FROM ${NODE_IMAGE}']);
    const engines = JSON.parse(read('package.json')).engines.node as string;
    expect(semver.satisfies(image!.slice(1, 4).join('.'), engines)).toBe(true);
    // Only what CI runs: Node 24, and 20.19 or later (these machines; vite needs 20.19).
    expect(['20.18.0', '22.12.0', '25.0.0'].filter((version) => semver.satisfies(version, engines))).toEqual([]);
  });
});
