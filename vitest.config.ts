import { defineConfig } from 'vitest/config';

/**
 * Tests wait on events, not on speed; the timeouts only end a test that hangs. They are generous
 * because a 2-core machine at load 10 runs a child process 5–10× slower than a quiet one (30 s
 * failed there). WARD_TEST_TIMEOUT_SCALE multiplies them for slower machines still.
 */
const scale = Math.max(1, Number(process.env['WARD_TEST_TIMEOUT_SCALE'] ?? 1) || 1);

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 120_000 * scale,
    hookTimeout: 120_000 * scale,
    pool: 'forks',
    setupFiles: ['tests/setup-state.ts'],
  },
});
