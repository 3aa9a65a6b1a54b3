import type { AppContext } from '../app/context.ts';
import { moveFailingWindows } from '../app/dashboard/failing.ts';
import { HOUR_MS } from '../domain/health/index.ts';
import type { Background } from './periodic.ts';

/**
 * How long after an hour's start the pass runs: a window's last hour changes 1 ms after the start
 * (store/dashboard/failing.ts failingWindowAt), and a timer may fire a little early by the app's clock.
 */
const AFTER_HOUR_MS = 50;

/**
 * Moves the dashboard's failing-tests windows onto the new hours at the start of every hour (by
 * `ctx.now`), so that the first read of an hour finds them there, unless it races the hour's start;
 * once at startup too, which also builds the windows of repositories that have none, off the read
 * path. Never two passes at once; errors are logged and the next hour tries again. `stop` ends the
 * timer and waits for a running pass.
 */
export function startFailingWindowMoves(
  ctx: AppContext,
  log: { info(o: object, m: string): void; error(o: object, m: string): void },
): Background {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    const now = ctx.now();
    timer = setTimeout(pass, HOUR_MS - (now % HOUR_MS) + AFTER_HOUR_MS);
    timer.unref();
  };
  const pass = () => {
    const started = Date.now();
    running = moveFailingWindows(ctx, ctx.now())
      .then((windows) => {
        if (windows > 0) log.info({ windows, ms: Date.now() - started }, 'failing-tests windows moved');
      })
      .catch((err: unknown) => log.error({ err }, 'moving the failing-tests windows failed'))
      .finally(() => {
        running = undefined;
        schedule();
      });
  };
  pass();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
