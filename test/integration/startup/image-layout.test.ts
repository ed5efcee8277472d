import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { scratchDir } from '../../support/backend';
import { ROOT, processEnv } from '../../support/processes';

/*
 * The Docker image holds package.json, scripts/, the built dist/ and the production node_modules, but
 * no TypeScript sources and no tsx. The documented token command must work there. Checked on a copy
 * of exactly that layout (no Docker engine is needed).
 */
jest.setTimeout(10 * 60_000);

let app: string;
beforeAll(() => {
  const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', 'service'], { cwd: ROOT, stdio: 'inherit' });
  expect(build.status).toBe(0);
  app = scratchDir('pfs-image-');
  for (const entry of ['package.json', 'scripts', 'dist']) fs.cpSync(path.join(ROOT, entry), path.join(app, entry), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
});
afterAll(() => fs.rmSync(app, { recursive: true, force: true }));

function npmRun(args: string[], env: Record<string, string>) {
  return spawnSync('npm', ['run', '--silent', ...args], { cwd: app, env: processEnv(env), encoding: 'utf8' });
}

describe('the image layout (built code only)', () => {
  it('runs `npm run token -- create` and `-- list` on the data directory', () => {
    const DATA_DIR = path.join(app, 'data');
    const created = npmRun(['token', '--', 'create', '--role', 'viewer', '--name', 'from the image'], { DATA_DIR });
    expect({ status: created.status, stderr: created.stderr }).toMatchObject({ status: 0 });
    expect(created.stdout).toMatch(/^pft_\S+$/m);
    expect(fs.existsSync(path.join(app, 'src'))).toBe(false);
    const listed = npmRun(['token', '--', 'list'], { DATA_DIR });
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(/viewer\s+active\s+from the image/);
  });
});
