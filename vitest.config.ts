import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Tests wait on events, not on speed; the timeouts only end a test that hangs. They are generous
 * because a 2-core machine at load 10 runs a child process 5–10× slower than a quiet one (30 s
 * failed there). WARD_TEST_TIMEOUT_SCALE multiplies them for slower machines still.
 */
const scale = Math.max(1, Number(process.env['WARD_TEST_TIMEOUT_SCALE'] ?? 1) || 1);

/**
 * Tests of the library's modules and of commands (in-process or as child processes), with no
 * daemon, proxy or telemetry in the test process itself: they share worker processes (no fresh process and module graph per
 * file, about 0.25 s of CPU each). Every other file keeps a process of its own.
 */
const SHARED_WORKER_DIRS = ['canon', 'intent', 'policy', 'gate', 'context', 'tokens', 'keys', 'witness', 'trace', 'pack', 'regress', 'runpack', 'cli', 'edge', 'decision', 'sdk', 'state'];
const sharedWorkerFiles = SHARED_WORKER_DIRS.map((d) => `tests/${d}/**/*.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 120_000 * scale,
    hookTimeout: 120_000 * scale,
    pool: 'forks',
    // Vitest's default is one worker per core less one: a single worker on 2 cores, which leaves a
    // core idle whenever a test waits on a process it started (much of this suite's time). Two
    // workers at least; `--maxWorkers` still overrides. Measured in docs/testing.md.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    setupFiles: ['tests/setup-state.ts'],
    projects: [
      { extends: true, test: { name: 'shared', include: sharedWorkerFiles, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['tests/**/*.test.ts'], exclude: sharedWorkerFiles } },
    ],
  },
});
