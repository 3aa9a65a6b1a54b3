import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { type Demo, DemoError, runDemo } from '../demo/demo.ts';
import { formatSummary } from '../demo/summary.ts';
import { CliError } from './client.ts';
import { DEMO_USAGE } from './usage.ts';

type Out = { log: (s: string) => void; err: (s: string) => void };

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function wholeNumber(value: string | undefined, flag: string, fallback: number, min: number, max: number) {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new CliError(`${flag} must be a whole number from ${min} to ${max}, got "${value}"`, 2);
  }
  return Number(value);
}

function options(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      exit: { type: 'boolean' },
      once: { type: 'boolean' },
      timeout: { type: 'string' },
      'log-level': { type: 'string' },
      forge: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const logLevel = LEVELS.find((l) => l === (values['log-level'] ?? 'warn'));
  if (logLevel === undefined) throw new CliError(`--log-level must be one of ${LEVELS.join(', ')}`, 2);
  const forge = values.forge ?? 'git';
  if (forge !== 'git' && forge !== 'gitlab')
    throw new CliError(`--forge must be git or gitlab, got "${forge}"`, 2);
  return {
    help: values.help === true,
    port: wholeNumber(values.port, '--port', 8080, 0, 65535),
    dataDir: values['data-dir'],
    exit: values.exit === true || values.once === true,
    timeoutSeconds: wholeNumber(values.timeout, '--timeout', 90, 1, 3600),
    logLevel: logLevel satisfies Config['logLevel'],
    forge: forge as 'git' | 'gitlab',
  };
}

/** `mainline demo`: runs the demo scenario, prints its summary, then serves until a signal (or exits with --exit). */
export async function demoCommand(args: string[], out: Out): Promise<number> {
  const o = options(args);
  if (o.help) {
    out.log(DEMO_USAGE);
    return 0;
  }
  const controller = new AbortController();
  let demo: Demo | undefined;
  let stopping = false;
  let stopped: (code: number) => void = () => undefined;
  const whenStopped = new Promise<number>((resolve) => {
    stopped = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      out.err(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    out.err(`${signal}: stopping the demo`);
    if (demo === undefined) {
      controller.abort();
      return;
    }
    demo.close().then(
      () => stopped(0),
      (error: unknown) => {
        out.err(`mainline: stopping the demo failed: ${String(error)}`);
        stopped(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    try {
      demo = await runDemo({
        port: o.port,
        ...(o.dataDir !== undefined ? { dataDir: o.dataDir } : {}),
        timeoutSeconds: o.timeoutSeconds,
        logLevel: o.logLevel,
        forge: o.forge,
        log: out.log,
        signal: controller.signal,
      });
    } catch (error) {
      if (controller.signal.aborted) return 130;
      if (error instanceof DemoError) throw new CliError(error.message);
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new CliError(
          `port ${o.port} on 127.0.0.1 is in use; pass --port <n>, or --port 0 for any free port`,
        );
      }
      throw error;
    }
    for (const line of formatSummary(demo, { commands: !o.exit })) out.log(line);
    if (stopping) return await whenStopped;
    if (o.exit) {
      await demo.close();
      return demo.summary.ok ? 0 : 1;
    }
    out.log('');
    out.log(
      `The server keeps running at ${demo.url}, and the local CI keeps testing merge-queue branches: ` +
        'open and submit more PRs (README.md, "The merge queue").',
    );
    out.log(
      demo.temporary
        ? `Press Ctrl-C to stop; ${demo.dataDir} is removed then (use --data-dir to keep the data).`
        : `Press Ctrl-C to stop; the data stays in ${demo.dataDir}.`,
    );
    return await whenStopped;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
