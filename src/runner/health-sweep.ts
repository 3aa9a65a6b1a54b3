import type { AppContext } from '../app/context.ts';
import { runHealthSweep } from '../app/health/sweep.ts';
import { type Background, runPeriodically } from './periodic.ts';

/** Runs the pass every `intervalMs` (never two at once); errors are logged and the next run tries again. */
export function startHealthSweep(
  ctx: AppContext,
  intervalMs: number,
  log: {
    info(o: object, m: string): void;
    warn(o: object, m: string): void;
    error(o: object, m: string): void;
  },
): Background {
  // Failed folds of the duration means (after uploads and in this pass) are logged here (warn).
  ctx.caches.meansFolds.log = log;
  return runPeriodically(
    async () => {
      const report = await runHealthSweep(ctx);
      if (report.tests > 0 || report.prunedUploads > 0 || report.foldedUploads > 0)
        log.info(report, 'periodic health pass');
    },
    intervalMs,
    (err) => log.error({ err }, 'periodic health pass failed'),
  );
}
