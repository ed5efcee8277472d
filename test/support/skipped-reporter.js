/*
 * Lists the tests a run skipped, each with the title that says why (test/support/skip.ts), so the
 * reasons show in jest's output even when it does not print test names (several files, not verbose).
 */
/* global require, process, module */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- jest loads reporters untransformed: CommonJS
const path = require('node:path');

class SkippedReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  /** One line per skipped block or test: the file, the title carrying the reason, how many tests. */
  lines(results) {
    const counts = new Map();
    for (const file of results.testResults) {
      for (const test of file.testResults) {
        if (test.status !== 'pending' && test.status !== 'skipped' && test.status !== 'todo') continue;
        const titles = [...test.ancestorTitles, test.title];
        const because = titles.find((title) => /\(skipped\b/.test(title));
        const key = `${path.relative(this.rootDir, file.testFilePath)}: ${because ?? `${titles.join(' › ')} (no reason given)`}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    return [...counts].map(([key, n]) => `  ${key}${n > 1 ? ` [${n} tests]` : ''}`);
  }

  onRunComplete(_contexts, results) {
    const lines = this.lines(results);
    if (lines.length > 0) process.stderr.write(`Skipped tests and why:\n${lines.join('\n')}\n`);
  }
}

module.exports = SkippedReporter;
