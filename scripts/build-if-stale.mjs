#!/usr/bin/env node
// Builds what `npm start` runs only when its inputs changed since the last build: a start with nothing
// changed pays for hashing a few hundred files, not for a TypeScript build (11 s quiet, 150 s loaded).
// Where the inputs are absent (the Docker image holds only the built output) there is nothing to do.
// Each target's first input decides whether its sources are there at all.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

const TARGETS = [
  {
    id: 'service',
    name: 'service',
    inputs: ['src', 'migrations', 'seeds', 'knexfile.ts', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    script: 'build',
    stamp: 'dist/.build-stamp',
  },
  {
    // The finance screen served at GET / (Vite; its own output folder, so each build empties only its own).
    id: 'web',
    name: 'finance screen',
    inputs: ['web', 'package-lock.json'],
    script: 'build:web',
    stamp: 'dist/web/.build-stamp',
  },
];

function files(relative) {
  const full = path.join(root, relative);
  if (!fs.existsSync(full)) return [];
  if (!fs.statSync(full).isDirectory()) return [relative];
  return fs
    .readdirSync(full)
    .sort()
    .flatMap((entry) => files(path.join(relative, entry)));
}

function digest(inputs) {
  const hash = crypto.createHash('sha256');
  for (const file of inputs.flatMap(files)) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

// `node scripts/build-if-stale.mjs web` checks only the listed targets (the end-to-end tests need only the screen).
const wanted = process.argv.slice(2);
for (const target of TARGETS.filter((t) => wanted.length === 0 || wanted.includes(t.id))) {
  if (!fs.existsSync(path.join(root, target.inputs[0]))) continue;
  const stampFile = path.join(root, target.stamp);
  const current = digest(target.inputs);
  const built = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8').trim() : '';
  if (built === current) continue;
  console.error(`Building the ${target.name} (its sources changed since the last build)...`);
  const run = spawnSync('npm', ['run', '--silent', target.script], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (run.status !== 0) process.exit(run.status ?? 1);
  fs.mkdirSync(path.dirname(stampFile), { recursive: true });
  fs.writeFileSync(stampFile, `${current}\n`);
}
