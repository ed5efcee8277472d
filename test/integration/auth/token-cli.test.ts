import fs from 'node:fs';
import path from 'node:path';
import { backendFromEnv, scratchDir } from '../../support/backend';
import { Finished, tokenCli } from '../../support/processes';

/*
 * npm run token as a user meets it: a mistake is one line on stderr and a non-zero exit, never SQL,
 * a driver's message or a stack; --help is not a mistake. Runs the command line as a process on the
 * suite's database (a copy of the template directory on PGlite).
 */
jest.setTimeout(5 * 60_000);

const backend = backendFromEnv();
let root: string | undefined;
let env: Record<string, string>;
beforeAll(() => {
  if (backend.kind === 'postgres') {
    env = { DATABASE_URL: backend.url, LOG_LEVEL: 'silent' };
  } else {
    root = scratchDir('pfs-token-cli-');
    const dataDir = path.join(root, 'data');
    fs.cpSync(backend.templateDir, dataDir, { recursive: true });
    env = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  }
});
afterAll(() => {
  if (root) fs.rmSync(root, { recursive: true, force: true });
});

const UNKNOWN_ID = '3f1c1b8e-1111-4222-8333-944455556666';

/** Exactly one line on stderr matching `pattern`, nothing on stdout, the exit code, and nothing that looks like SQL or a stack. */
function expectOneLine(run: Finished, code: number, pattern: RegExp): void {
  const lines = run.stderr.split('\n').filter((line) => line.trim() !== '');
  expect({ code: run.code, lines, stdout: run.stdout }).toEqual({ code, lines: [expect.stringMatching(pattern)], stdout: '' });
  expect(run.stderr).not.toMatch(/\b(select|insert into|update|delete from)\b|\bat .+:\d+:\d+|api_tokens|violates/i);
}

describe('npm run token: mistakes are one line, never SQL', () => {
  it('prints the usage on --help and exits 0', async () => {
    for (const args of [['--help'], ['-h'], ['create', '--help']]) {
      const run = await tokenCli(args, env);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout).toMatch(/^Usage:\n {2}npm run token -- create --role viewer\|editor\|admin --name NAME/);
    }
  });

  it('names the roles that exist for an unknown role, and the command line mistakes, before opening the database', async () => {
    const runs = await Promise.all([
      tokenCli(['create', '--role', 'owner', '--name', 'x'], env),
      tokenCli(['create', '--role', 'viewer', '--name', 'x', '--team', 'nope'], env),
      tokenCli(['revoke', 'nope'], env),
      tokenCli(['create', '--role', 'viewer'], env),
      tokenCli(['create', '--role', 'viewer', '--name', 'x', '--expires-in-days', 'soon'], env),
      tokenCli(['rotate'], env),
    ]);
    expectOneLine(runs[0] as Finished, 2, /^Unknown role "owner": the roles are viewer, editor, admin/);
    expectOneLine(runs[1] as Finished, 2, /^--team must be a team id \(a UUID\), not "nope"/);
    expectOneLine(runs[2] as Finished, 2, /^"nope" is not a token id \(a UUID\)/);
    expectOneLine(runs[3] as Finished, 2, /^create needs --name NAME/);
    expectOneLine(runs[4] as Finished, 2, /^--expires-in-days must be a whole number of days/);
    expectOneLine(runs[5] as Finished, 2, /^Unknown command "rotate": the commands are create, list and revoke/);
  });

  it('says so in one line when the team or the token does not exist', async () => {
    const noTeam = await tokenCli(['create', '--role', 'viewer', '--name', 'x', '--team', UNKNOWN_ID], env);
    expectOneLine(noTeam, 1, new RegExp(`^No team ${UNKNOWN_ID}$`));
    const noToken = await tokenCli(['revoke', UNKNOWN_ID], env);
    expectOneLine(noToken, 1, new RegExp(`^No token ${UNKNOWN_ID} in team `));
    const listOfNoTeam = await tokenCli(['list', '--team', UNKNOWN_ID], env);
    expectOneLine(listOfNoTeam, 1, new RegExp(`^No team ${UNKNOWN_ID}$`));
  });

  it('creates a token with an expiry and lists it with its expiry and last use', async () => {
    const before = Date.now();
    const created = await tokenCli(['create', '--role', 'editor', '--name', 'nightly export', '--expires-in-days', '30'], env);
    const after = Date.now();
    expect(created.code).toBe(0);
    const id = /id ([0-9a-f-]{36}), expires (\S+)\)/.exec(created.stdout);
    expect(id).not.toBeNull();
    // 30 days after the moment of creation, which lies within the command's run.
    const expires = new Date((id as RegExpExecArray)[2] as string).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 30 * 86_400_000);
    expect(expires).toBeLessThanOrEqual(after + 30 * 86_400_000);
    const listed = await tokenCli(['list'], env);
    expect(listed.stdout).toMatch(new RegExp(`${(id as RegExpExecArray)[1]}\\s+editor\\s+active\\s+nightly export\\s+\\(expires \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d, last used never\\)`));
  });
});
