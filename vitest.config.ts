import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal core bridge is a native module: worker threads crash or leak with it.
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['./test/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
