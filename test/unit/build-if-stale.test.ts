import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/*
 * `npm start` runs scripts/build-if-stale.mjs instead of a full build. Checked on a scratch project
 * whose "build" only counts how often it ran, so the test measures decisions, not compile time.
 */
const SCRIPT = path.resolve(__dirname, '../../scripts/build-if-stale.mjs');
let project: string;

beforeEach(() => {
  project = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-build-'));
  fs.mkdirSync(path.join(project, 'scripts'));
  fs.copyFileSync(SCRIPT, path.join(project, 'scripts/build-if-stale.mjs'));
  fs.mkdirSync(path.join(project, 'src'));
  fs.writeFileSync(path.join(project, 'src/server.ts'), 'export const a = 1;\n');
  const build = `node -e "require('fs').appendFileSync('builds.txt', 'x')"`;
  const buildWeb = `node -e "require('fs').appendFileSync('web-builds.txt', 'x')"`;
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, scripts: { build, 'build:web': buildWeb } }));
});
afterEach(() => fs.rmSync(project, { recursive: true, force: true }));

function count(file: string): number {
  const counter = path.join(project, file);
  return fs.existsSync(counter) ? fs.readFileSync(counter, 'utf8').length : 0;
}

function start(): number {
  const run = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: project, encoding: 'utf8' });
  expect(run.status).toBe(0);
  return count('builds.txt');
}

describe('build-if-stale', () => {
  it('builds on the first start, not again while nothing changed, and again after a source changes', () => {
    expect(start()).toBe(1);
    expect(start()).toBe(1);
    fs.writeFileSync(path.join(project, 'src/server.ts'), 'export const a = 2;\n');
    expect(start()).toBe(2);
    fs.writeFileSync(path.join(project, 'src/new-module.ts'), 'export const b = 1;\n');
    expect(start()).toBe(3);
    expect(start()).toBe(3);
  });

  it('rebuilds when the built output is gone, and does nothing where there are no sources (the Docker image)', () => {
    expect(start()).toBe(1);
    fs.rmSync(path.join(project, 'dist'), { recursive: true });
    expect(start()).toBe(2);
    fs.rmSync(path.join(project, 'src'), { recursive: true });
    expect(start()).toBe(2);
  });

  it('builds only the targets named on the command line', () => {
    fs.mkdirSync(path.join(project, 'web'));
    fs.writeFileSync(path.join(project, 'web/index.html'), '<!doctype html>\n');
    const run = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', 'web'], { cwd: project, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(count('builds.txt')).toBe(0);
    expect(count('web-builds.txt')).toBe(1);
  });

  it('builds the finance screen from web/ on its own: a change there rebuilds the screen, not the service', () => {
    expect(start()).toBe(1);
    expect(count('web-builds.txt')).toBe(0);
    fs.mkdirSync(path.join(project, 'web/src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'web/src/main.tsx'), 'export const a = 1;\n');
    expect(start()).toBe(1);
    expect(count('web-builds.txt')).toBe(1);
    expect(start()).toBe(1);
    expect(count('web-builds.txt')).toBe(1);
    fs.writeFileSync(path.join(project, 'web/src/main.tsx'), 'export const a = 2;\n');
    expect(start()).toBe(1);
    expect(count('web-builds.txt')).toBe(2);
    fs.rmSync(path.join(project, 'dist/web'), { recursive: true });
    expect(start()).toBe(1);
    expect(count('web-builds.txt')).toBe(3);
    fs.writeFileSync(path.join(project, 'package-lock.json'), '{}\n');
    expect(start()).toBe(2);
    expect(count('web-builds.txt')).toBe(4);
  });

  it('is what npm start, npm run token and npm run migrate run before the built code', () => {
    const { scripts } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.prestart).toBe('node scripts/build-if-stale.mjs');
    // The command-line tools need only the service's build, not the screen's.
    expect(scripts.token).toMatch(/^node scripts\/build-if-stale\.mjs service && node dist\//);
    expect(scripts.migrate).toMatch(/^node scripts\/build-if-stale\.mjs service && node dist\//);
    expect(scripts['build:web']).toMatch(/^vite build web\b/);
  });
});
