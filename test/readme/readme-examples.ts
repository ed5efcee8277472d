import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/*
 * `npm run readme:check`: pastes the README's example walkthrough, in order, into bash against the
 * built service started on a fresh data directory with its demo data, as a new user would right
 * after the first `npm start`, and checks what each step answers.
 *
 * The walkthrough is every ```bash block between `<!-- readme-examples:start -->` and
 * `<!-- readme-examples:end -->` in README.md; each block is one step. Comment conventions, inside a
 * step (the lines stay readable as plain comments for a reader pasting them):
 *
 *   # status: 200           every HTTP request the step makes answers 200
 *   # status: 200 201 412   the step makes exactly these requests, answering these statuses, in order
 *   # => some output        the step prints exactly these lines (one `# =>` per line, in order);
 *                           numbers compare by value, so 2860 matches 2860.00
 *
 * A step that makes requests must say `# status:`. A step must end with exit status 0 and print
 * nothing on stderr. Shell variables (and functions) a step defines are kept for the next steps.
 *
 * The service listens on a free port (never 3000) and the steps get its address in `BASE`, as a user
 * exports it: a step that names a host and port itself (other than as the default of `BASE`) fails,
 * and so does a walkthrough that leaves a file in the directory it runs in.
 */

const ROOT = path.resolve(__dirname, '../..');
const START = '<!-- readme-examples:start -->';
const END = '<!-- readme-examples:end -->';

type Step = { index: number; line: number; script: string; statuses: number[] | undefined; output: string[] | undefined };

function extractSteps(readme: string): Step[] {
  const from = readme.indexOf(START);
  const to = readme.indexOf(END);
  if (from < 0 || to < from) throw new Error(`README.md has no ${START} ... ${END} section`);
  const firstLine = readme.slice(0, from).split('\n').length;
  const section = readme.slice(from, to).split('\n');
  const steps: Step[] = [];
  let block: string[] | undefined;
  let blockLine = 0;
  section.forEach((text, i) => {
    if (block === undefined) {
      if (/^```(bash|sh)\s*$/.test(text)) {
        block = [];
        blockLine = firstLine + i + 1;
      }
      return;
    }
    if (!/^```\s*$/.test(text)) {
      block.push(text);
      return;
    }
    const lines = block;
    block = undefined;
    const statusLine = lines.map((l) => /^\s*# status:\s*(.*)$/.exec(l)?.[1]).find((s) => s !== undefined);
    const outputs = lines.map((l) => /^\s*# => ?(.*)$/.exec(l)?.[1]).filter((s): s is string => s !== undefined);
    steps.push({
      index: steps.length + 1,
      line: blockLine,
      script: lines.join('\n'),
      statuses: statusLine === undefined ? undefined : statusLine.trim().split(/\s+/).map(Number),
      output: outputs.length ? outputs : undefined,
    });
  });
  if (block !== undefined) throw new Error('README.md: an example block is not closed');
  if (!steps.length) throw new Error('README.md: no ```bash blocks between the example markers');
  return steps;
}

/** Numbers compare by value (jq versions differ in how they print 2860.00). */
function canonical(line: string): string {
  return line.trimEnd().replace(/\d+\.\d+/g, (n) => n.replace(/\.?0+$/, ''));
}

type Service = { baseUrl: string; token: string; stop: () => Promise<void>; log: () => string };

/** Starts `node dist/src/server.js` on a fresh data directory; resolves once it printed its URL and token. */
async function startService(dir: string): Promise<Service> {
  const logFile = path.join(dir, 'service.log');
  // The log goes to a file: this runner blocks while a step runs, and a full pipe would stall the service.
  const out = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/src/server.js')], {
    cwd: ROOT,
    stdio: ['ignore', out, out],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      // Set but empty: dotenv never overrides a variable that is set, so a developer's .env stays out.
      DATABASE_URL: '',
      ADMIN_TOKEN: '',
      DATA_DIR: path.join(dir, 'data'),
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      SEED_DEMO: 'true',
    },
  });
  fs.closeSync(out);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.on('close', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  const log = () => fs.readFileSync(logFile, 'utf8');
  const stop = async () => {
    if (exitCode === undefined) child.kill('SIGTERM');
    await exited;
  };
  // No time limit: a first start on a busy machine is slow; CI's own limit bounds a hang.
  for (;;) {
    const text = log();
    const url = /listening on (http:\/\/\S+)/.exec(text)?.[1];
    const token = /export TOKEN=(\S+)/.exec(text)?.[1];
    if (url && token && text.includes('Try it:')) return { baseUrl: url, token, stop, log };
    if (exitCode !== undefined) throw new Error(`the service exited (${exitCode}) before it was ready:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/*
 * Each step runs in its own bash: it first reads the variables the earlier steps left, and a curl
 * wrapper records every response's status (the last status line of its headers) in a file.
 */
const PREAMBLE = `
source "$README_STATE"
curl() {
  local headers status rc
  headers=$(mktemp)
  command curl -D "$headers" "$@"; rc=$?
  status=$(tr -d '\\r' < "$headers" | awk '/^HTTP\\//{s=$2} END{print s}')
  echo "\${status:-000}" >> "$README_STATUSES"
  rm -f "$headers"
  return $rc
}
`;
const POSTAMBLE = `
__rc=$?
for __v in $(compgen -v); do
  case " $README_BASELINE " in *" $__v "*) ;; *) [[ $__v == _* ]] || declare -p "$__v" ;; esac
done > "$README_STATE"
declare -f >> "$README_STATE"
exit $__rc
`;

/** `BASE=${BASE:-http://127.0.0.1:3000}`: the one place a step may name an address, as the default of BASE. */
const BASE_DEFAULT = /^\s*BASE=\$\{BASE:-[^}]*\}\s*$/;
const ADDRESS = /\b(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]):\d+/;

function hardCodedAddresses(step: Step): string[] {
  return step.script.split('\n').filter((line) => !BASE_DEFAULT.test(line) && !/^\s*#/.test(line) && ADDRESS.test(line));
}

function runStep(step: Step, env: NodeJS.ProcessEnv, cwd: string, statusFile: string) {
  fs.writeFileSync(statusFile, '');
  const run = spawnSync('bash', ['-c', `${PREAMBLE}\n${step.script}\n${POSTAMBLE}`], { cwd, env, encoding: 'utf8' });
  const statuses = fs.readFileSync(statusFile, 'utf8').split('\n').filter(Boolean).map(Number);
  return { code: run.status, stdout: run.stdout, stderr: run.stderr, statuses };
}

function check(step: Step, result: ReturnType<typeof runStep>): string[] {
  const problems: string[] = hardCodedAddresses(step).map((line) => `names an address instead of $BASE: ${line.trim()}`);
  if (result.code !== 0) problems.push(`exit status ${result.code}`);
  if (result.stderr.trim()) problems.push(`stderr: ${result.stderr.trim()}`);
  if (step.statuses) {
    const expected = step.statuses.length === 1 ? result.statuses.map(() => step.statuses?.[0]) : step.statuses;
    if (!result.statuses.length || expected.join(' ') !== result.statuses.join(' ')) {
      problems.push(`statuses ${result.statuses.join(' ') || '(no request)'}, expected ${step.statuses.join(' ')}`);
    }
  } else if (result.statuses.length) {
    problems.push(`made requests (${result.statuses.join(' ')}) but has no "# status:" comment`);
  }
  if (step.output) {
    const actual = result.stdout.replace(/\s+$/, '').split('\n');
    const same = actual.length === step.output.length && actual.every((line, i) => canonical(line) === canonical(step.output?.[i] ?? ''));
    if (!same) problems.push(`printed:\n${actual.join('\n')}\nexpected:\n${step.output.join('\n')}`);
  }
  return problems;
}

async function main() {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const steps = extractSteps(readme);
  if (!fs.existsSync(path.join(ROOT, 'dist/src/server.js'))) throw new Error('dist/src/server.js is missing: run npm run build first');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pfs-readme-'));
  const work = path.join(dir, 'work');
  fs.mkdirSync(work);
  const service = await startService(dir);
  let failed = 0;
  try {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      LANG: 'C.UTF-8',
      TOKEN: service.token,
      BASE: service.baseUrl,
      README_STATE: path.join(dir, 'state.sh'),
      README_STATUSES: path.join(dir, 'statuses'),
    };
    fs.writeFileSync(env.README_STATE as string, '');
    const baseline = spawnSync('bash', ['-c', `${PREAMBLE}\ncompgen -v`], { env, encoding: 'utf8' }).stdout;
    env.README_BASELINE = baseline.split('\n').filter(Boolean).join(' ') + ' README_BASELINE';
    if (new URL(service.baseUrl).port === '3000') throw new Error('the service must not listen on port 3000 here: the check is that BASE is used');
    for (const step of steps) {
      const result = runStep(step, env, work, env.README_STATUSES as string);
      const problems = check(step, result);
      const title = step.script.split('\n').find((l) => l.trim() && !l.trim().startsWith('#')) ?? '';
      if (problems.length) {
        failed++;
        console.log(`not ok ${step.index} (README.md line ${step.line}): ${title}\n  ${problems.join('\n  ').replace(/\n/g, '\n    ')}`);
      } else {
        console.log(`ok ${step.index} ${title}`);
      }
    }
    const left = fs.readdirSync(work);
    if (left.length) {
      failed++;
      console.log(`not ok: the examples left files in the directory they ran in: ${left.join(', ')}`);
    }
  } finally {
    await service.stop();
    if (failed) console.log(`\nservice log:\n${service.log()}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(failed ? `README examples: ${failed} of ${steps.length} steps failed` : `README examples: all ${steps.length} steps answered as documented`);
  process.exitCode = failed ? 1 : 0;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
