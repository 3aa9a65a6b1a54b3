import type { WebhookDispatcher } from '../app/webhooks-out/dispatch.ts';
import { type Background, runPeriodically } from './periodic.ts';

/** Runs dispatcher passes every `intervalMs` (never two at once) until stopped; errors are logged. */
export function startWebhookDispatcher(
  dispatcher: WebhookDispatcher,
  intervalMs: number,
  log: { error(o: object, m: string): void },
): Background {
  return runPeriodically(
    () => dispatcher.runOnce(),
    intervalMs,
    (err) => log.error({ err }, 'webhook dispatcher pass failed'),
  );
}
