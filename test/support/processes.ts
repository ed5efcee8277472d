import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { backendFromEnv } from './backend';
import { Api } from './harness';

/*
 * The service and its command-line tools as separate processes, run from the TypeScript sources, for
 * tests of what only a process shows: start-up failures, exit codes, one owner per data directory.
 */
export const ROOT = path.resolve(__dirname, '../..');

/** A clean environment: nothing inherited from the test run decides the database or the port. */
export function processEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    NODE_OPTIONS: '',
    // Set but empty: dotenv never overrides a variable that is set, so a developer's .env stays out.
    DATABASE_URL: '',
    ADMIN_TOKEN: '',
    DATA_DIR: '',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    SEED_DEMO: 'false',
    ...overrides,
  };
}

function spawnSource(script: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script), ...args], {
    cwd: ROOT,
    env: processEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export type Finished = { code: number | null; stdout: string; stderr: string };

/** Runs a script to its end (no time limit: a busy machine is slow, and jest's timeout is the bound). */
export function runToExit(script: string, args: string[], env: Record<string, string>): Promise<Finished> {
  const child = spawnSource(script, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export const tokenCli = (args: string[], env: Record<string, string>) => runToExit('src/auth/token-cli.ts', args, env);

export type RunningService = {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
};

/** Starts the service and resolves once it printed its URL; rejects with its output if it exits first. */
export function startService(env: Record<string, string>): Promise<RunningService> {
  const child = spawnSource('src/server.ts', [], env);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Project finance service listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ child, baseUrl: match[1] as string, output: () => output, exited });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => reject(new Error(`the service exited (${code}) before listening:\n${output}`)));
  });
}

/** SIGKILL, then wait until the process is really gone. */
export async function kill(service: RunningService): Promise<void> {
  service.child.kill('SIGKILL');
  await service.exited;
}

/**
 * A second instance of the service beside a test's harness, on PostgreSQL (a process of its own, as
 * production starts it: its own pool, caches, refreshes and listeners), with an API client holding the
 * harness's token; none on PGlite, whose one process holds the database. Stop it with kill().
 */
export async function startSecondInstance(harness: { api: Api }): Promise<{ second: RunningService; other: Api } | undefined> {
  const backend = backendFromEnv();
  if (backend.kind !== 'postgres') return undefined;
  const second = await startService({ DATABASE_URL: backend.url, LOG_LEVEL: 'warn' });
  return { second, other: new Api(second.baseUrl, harness.api.token) };
}
