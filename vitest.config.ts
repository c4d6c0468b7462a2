import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Worker threads and child processes on a 2-core machine: keep files in separate forks and
    // give hostile fixtures room; nothing in the suite waits on a fixed sleep.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: true,
    maxWorkers: 2,
    // In CI a JSON report lets .ci/run print one plain "N passed, N failed" closing line; it runs the
    // suite once per Node version, each with a report file of its own.
    reporters:
      process.env['CI'] || process.env['VITEST_JSON_REPORT']
        ? ['default', ['json', { outputFile: process.env['VITEST_JSON_REPORT'] ?? '.ci/vitest-report.json' }]]
        : ['default'],
  },
});
