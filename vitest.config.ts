import { configDefaults, defineConfig } from 'vitest/config';

// isolated-vm segfaults under vitest on Node 20 without --no-node-snapshot (isolated-vm #481),
// and must run in child processes (forks), never worker threads.
const shared = {
  pool: 'forks' as const,
  execArgv: ['--no-node-snapshot'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // Every project in group 1, the bench in 2: vitest puts group-0 files into a sequential group
  // of their own, run last, under --maxWorkers=1, which would run the bench first.
  sequence: { groupOrder: 1 },
};

const BENCH_TWO_RUNS = 'test/bench-two-runs.test.ts';

export default defineConfig({
  test: {
    ...shared,
    // A scratch TMPDIR per run, removed at its end (test/support/scratch-dir.ts).
    globalSetup: ['./test/support/scratch-dir.ts'],
    // The JSON results let .ci/run print a plain "N passed, N failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest/results.json' },
    projects: [
      { test: { ...shared, name: 'core', include: ['packages/core/test/**/*.test.ts'] } },
      { test: { ...shared, name: 'sandbox', include: ['packages/sandbox/test/**/*.test.ts'] } },
      { test: { ...shared, name: 'cli', include: ['packages/cli/test/**/*.test.ts'] } },
      { test: { ...shared, name: 'integration', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, BENCH_TWO_RUNS] } },
      // Alone, after every other project: two bench runs compared with each other must not
      // each have a different neighbour (test/bench-two-runs.test.ts).
      { test: { ...shared, name: 'bench', include: [BENCH_TWO_RUNS], sequence: { groupOrder: 2 } } },
    ],
  },
});
