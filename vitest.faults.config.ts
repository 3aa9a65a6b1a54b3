import { defineConfig } from 'vitest/config';

/**
 * The faults suite (`npm run test:faults`): real server processes SIGKILLed mid-work, restarted, and
 * replicas on one PostgreSQL database. Slow, so it is kept out of `npm test`; files run one at a time.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
