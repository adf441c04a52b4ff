import { defineConfig } from 'vitest/config';

// Each test file gets a private TMPDIR that is removed after it (tests/helpers/tmp-per-file.ts).
const TMP = './tests/helpers/tmp-per-file.ts';

// unit: fast tests next to the code. e2e/sandbox/browser: drive the built binary (dist/rune, or
// RUNE_BIN) and real processes, so they get longer timeouts and run one file at a time per worker.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'web/src/**/*.test.ts', 'scripts/**/*.test.ts'],
          testTimeout: 15_000,
          setupFiles: [TMP],
        },
      },
      {
        test: {
          name: 'e2e',
          setupFiles: [TMP],
          include: ['tests/e2e/**/*.test.ts', 'tests/sandbox/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'browser',
          setupFiles: [TMP],
          include: ['tests/browser/**/*.test.ts'],
          testTimeout: 90_000,
          hookTimeout: 90_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
