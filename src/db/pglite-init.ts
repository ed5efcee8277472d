import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/*
 * PGlite creates a new data directory by running initdb in the opening process: a second and a third
 * WebAssembly instance (initdb, and a PostgreSQL to copy its output) whose memory the process keeps
 * after they are closed (WebAssembly memory never shrinks; 790 MB RSS measured against 290 MB for a
 * start on an existing directory; see BENCHMARKS.md). So a new directory is created by a short-lived
 * child process, and the service only ever opens an existing one.
 */

/** The child: open the directory with PGlite (which runs initdb), close it, exit. */
const CHILD_SCRIPT = `
const { PGlite } = require(process.argv[1]);
PGlite.create(process.argv[2]).then((pg) => pg.close()).then(
  () => process.exit(0),
  (err) => { console.error(err && err.message ? err.message : String(err)); process.exit(1); },
);
`;

export function isInitialised(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, 'PG_VERSION'));
}

/** Creates the database in `dataDir` (an existing, writable, claimed directory) unless it holds one. */
export async function initialiseDataDir(dataDir: string): Promise<void> {
  if (isInitialised(dataDir)) return;
  const pglite = require.resolve('@electric-sql/pglite');
  const child = spawn(process.execPath, ['-e', CHILD_SCRIPT, pglite, dataDir], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (exitCode, signal) => resolve(signal ? null : exitCode));
  });
  if (code !== 0 || !isInitialised(dataDir)) {
    throw new Error(`initdb failed (${code === null ? 'killed' : `exit ${code}`}): ${stderr.trim().split('\n').pop() ?? ''}`);
  }
}
