/*
 * Tests that cannot run in some setting are skipped with the reason in their title, "… (skipped on
 * PGlite: …)", so jest's output says why; test/support/skipped-reporter.js lists them after every run.
 * No test file calls describe.skip or it.skip directly (test/unit/skips.test.ts checks).
 */

type Block = (title: string, fn: () => void) => void;
type Test = (title: string, fn: jest.ProvidesCallback, timeout?: number) => void;

/** `describe` when `runs`, else a skipped one titled with `why`. */
export function describeIf(runs: boolean, why: string): Block {
  return runs ? describe : (title, fn) => describe.skip(`${title} (${why})`, fn);
}

/** `it` when `runs`, else a skipped one titled with `why`. */
export function itIf(runs: boolean, why: string): Test {
  return runs ? it : (title, fn, timeout) => it.skip(`${title} (${why})`, fn, timeout);
}
