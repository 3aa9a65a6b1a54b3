import type { AppContext } from '../../src/app/context.ts';
import type { TestApp } from './app.ts';

/**
 * The context a runner would hand the health sweep, around a test app: its database, config and
 * caches (shared, so the sweep's bumps reach the app's reads) and the test's clock.
 */
export function sweepContext(t: TestApp, now: () => number): AppContext {
  return { db: t.db.database.db, config: t.config, now, caches: t.caches };
}
