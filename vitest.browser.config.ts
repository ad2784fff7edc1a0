import { defineConfig } from 'vitest/config';

// Browser tests (Playwright driving Chromium): `npm run test:browser`. Kept out of `npm test`
// (whose include is tests/**/*.test.ts) so that the main suite needs no browser.
export default defineConfig({
  test: {
    include: ['tests/browser/**/*.browser.ts'],
    testTimeout: 90_000,
    hookTimeout: 90_000,
    pool: 'forks',
    fileParallelism: false,
    setupFiles: ['tests/setup-state.ts'],
  },
});
