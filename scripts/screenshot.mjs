#!/usr/bin/env node
// `npm run screenshot`: docs/screen.png, the finance screen on the demo data, as the README shows it.
// Starts the service on a fresh data directory, signs in with the token it prints, expands a parent
// task and opens a breakdown in headless Chromium (Debian's /usr/bin/chromium), then stops everything.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const output = path.join(root, 'docs', 'screen.png');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-screenshot-'));

const build = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', 'web'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: path.join(scratch, 'data'), PORT: '0', HOST: '127.0.0.1', SEED_DEMO: 'true', LOG_LEVEL: 'warn', DATABASE_URL: '', ADMIN_TOKEN: '' };
const service = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
let printed = '';
const ready = new Promise((resolve, reject) => {
  service.stdout.on('data', (chunk) => {
    printed += chunk.toString();
    const url = /listening on (http:\/\/\S+)/.exec(printed)?.[1];
    const token = /export TOKEN=(pft_\S+)/.exec(printed)?.[1];
    if (url && token) resolve({ url, token });
  });
  service.on('exit', (code) => reject(new Error(`the service exited (${code}) before it was ready`)));
});

let browser;
try {
  const { url, token } = await ready;
  browser = await chromium.launchPersistentContext(path.join(scratch, 'chromium'), {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1920, height: 860 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(60_000);
  await page.goto(`${url}/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('table.tasks tbody tr').first().waitFor();
  await page.getByRole('button', { name: 'Expand subtasks of Backend API' }).click();
  await page.getByRole('button', { name: 'Breakdown of Checkout' }).waitFor();
  await page.getByRole('button', { name: 'Breakdown of Design system' }).click();
  await page.locator('.panel canvas').waitFor();
  await page.locator('.panel tr.member-row').first().waitFor();
  fs.mkdirSync(path.dirname(output), { recursive: true });
  await page.screenshot({ path: output });
  console.log(`Wrote ${path.relative(root, output)}`);
} finally {
  await browser?.close();
  service.kill('SIGTERM');
  await new Promise((resolve) => (service.exitCode === null ? service.on('exit', resolve) : resolve()));
  fs.rmSync(scratch, { recursive: true, force: true });
}
