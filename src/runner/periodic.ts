/** A background task started with the server and stopped (awaited) at shutdown. */
export interface Background {
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `intervalMs`, never two at once (a tick while one runs is skipped); a failure is
 * handed to `onError` and the next tick tries again. `stop` ends the timer and waits for a running pass.
 */
export function runPeriodically(
  pass: () => Promise<unknown>,
  intervalMs: number,
  onError: (err: unknown) => void,
): Background {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running !== undefined) return;
    running = pass()
      .then(() => undefined)
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
