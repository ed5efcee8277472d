import fs from 'node:fs';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const SkippedReporter = require('../support/skipped-reporter.js');

const TEST_ROOT = path.join(__dirname, '..');
const SKIP_HELPERS = path.join(TEST_ROOT, 'support', 'skip.ts');

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(file);
    return /\.[cm]?[jt]s$/.test(entry.name) ? [file] : [];
  });
}

describe('skipped tests', () => {
  it('are skipped only through test/support/skip.ts, which puts the reason in the title', () => {
    const direct = /\b(describe|it|test)\.skip\b|\bx(describe|it|test)\(/;
    const offenders = testFiles(TEST_ROOT)
      .filter((file) => file !== SKIP_HELPERS && file !== __filename)
      .filter((file) => direct.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(TEST_ROOT, file));
    expect(offenders).toEqual([]);
  });

  it('are listed after the run with the title that says why, one line per skipped block', () => {
    const reporter = new SkippedReporter({ rootDir: '/repo' });
    const result = (ancestorTitles: string[], title: string, status: string) => ({ ancestorTitles, title, status });
    const lines = reporter.lines({
      testResults: [
        {
          testFilePath: '/repo/test/integration/a.test.ts',
          testResults: [
            result(['outage (skipped on PGlite: in-process)'], 'answers 503', 'pending'),
            result(['outage (skipped on PGlite: in-process)'], 'recovers', 'pending'),
            result(['outage (skipped on PGlite: in-process)'], 'runs', 'passed'),
          ],
        },
        {
          testFilePath: '/repo/test/integration/b.test.ts',
          testResults: [result(['start-up'], 'names a role (skipped on PGlite: no server)', 'pending'), result(['start-up'], 'plain', 'pending')],
        },
      ],
    });
    expect(lines).toEqual([
      '  test/integration/a.test.ts: outage (skipped on PGlite: in-process) [2 tests]',
      '  test/integration/b.test.ts: names a role (skipped on PGlite: no server)',
      '  test/integration/b.test.ts: start-up › plain (no reason given)',
    ]);
  });
});
