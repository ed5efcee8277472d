/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Skipped tests say why (test/support/skip.ts); this lists them after the run.
  reporters: ['default', '<rootDir>/test/support/skipped-reporter.js'],
  // Each integration file opens the shared database once; two workers suit these 2-core machines.
  maxWorkers: 2,
  // No test waits on a timer; this bound only stops a hung test, and a loaded machine may be 10x slower.
  testTimeout: 10 * 60_000,
};
