import { spawn } from 'node:child_process';
import os from 'node:os';
import { CliError, type UploadResponse } from './client.ts';
import {
  type ClientContext,
  collectFiles,
  noFilesMessage,
  parseUploadFlags,
  planUpload,
  sendAndReport,
  type UploadFlags,
} from './upload.ts';
import { testLabel } from './upload-summary.ts';

type Outcome = { code: number } | { signal: NodeJS.Signals } | { spawnError: NodeJS.ErrnoException };

/** Signals the command gets passed on; SIGINT already reaches it from the terminal. */
const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGHUP'];

/** Runs the command with this process's terminal; this process outlives Ctrl-C to report. */
function runCommand(command: readonly string[], ctx: ClientContext): Promise<Outcome> {
  const [file, ...args] = command as [string, ...string[]];
  const child = spawn(file, args, { stdio: 'inherit', env: { ...ctx.env }, cwd: ctx.cwd });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  const ignore = () => undefined;
  for (const signal of FORWARDED) process.on(signal, forward);
  process.on('SIGINT', ignore);
  return new Promise<Outcome>((resolve) => {
    child.once('error', (spawnError) => resolve({ spawnError }));
    child.once('exit', (code, signal) => resolve(signal === null ? { code: code ?? 1 } : { signal }));
  }).finally(() => {
    for (const signal of FORWARDED) process.off(signal, forward);
    process.off('SIGINT', ignore);
  });
}

/** Uploads what the command wrote; undefined (and why, on stderr) when nothing was accepted. */
async function uploadAfterRun(
  flags: UploadFlags,
  ctx: ClientContext,
  startedAt: number,
): Promise<UploadResponse | undefined> {
  try {
    const plan = planUpload(flags, ctx);
    const files = collectFiles(plan, ctx, startedAt);
    if (files.length === 0) throw new CliError(noFilesMessage(plan.patterns));
    return await sendAndReport(plan, files, plan.json ? ctx.out.log : ctx.out.err, ctx.out.err);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    ctx.out.err(`mainline: test results not uploaded: ${error.message}`);
    return undefined;
  }
}

/** The exit code once the command failed with `code` and the upload answered `response`. */
function exitAfterFailure(code: number, response: UploadResponse | undefined, ctx: ClientContext): number {
  const say = (s: string) => ctx.out.err(`mainline: ${s}`);
  if (response === undefined) {
    say(`keeping the command's exit code ${code}`);
    return code;
  }
  const failed = response.failed_tests;
  if (failed.length === 0) {
    say(
      `the command failed (exit code ${code}) but its reports list no failed tests; keeping exit code ${code}`,
    );
    return code;
  }
  const unreadable = response.files.filter((f) => !f.ok).map((f) => f.name);
  if (unreadable.length > 0) {
    say(`some reports could not be read (${unreadable.join(', ')}); keeping exit code ${code}`);
    return code;
  }
  if (!response.all_failures_quarantined) {
    const open = failed.filter((t) => !t.quarantined);
    say(
      `${open.length} failed test(s) not quarantined, e.g. ${testLabel(open[0] ?? failed[0]!)}; exit code ${code}`,
    );
    return code;
  }
  say(`every failed test is quarantined, so this run passes (the command exited with ${code}):`);
  for (const test of failed) ctx.out.err(`  quarantined: ${testLabel(test)}`);
  return 0;
}

/** `mainline test [upload flags] -- <command…>`: run, upload the reports, decide the exit code. */
export async function testCommand(args: readonly string[], ctx: ClientContext): Promise<number> {
  const separator = args.indexOf('--');
  const command = separator === -1 ? [] : args.slice(separator + 1);
  if (command.length === 0) {
    throw new CliError(
      "test needs the command to run after --, e.g. mainline test --junit 'reports/*.xml' -- npm test",
      2,
      true,
    );
  }
  const flags = parseUploadFlags(args.slice(0, separator), 'test');
  const startedAt = Date.now();
  const outcome = await runCommand(command, ctx);
  if ('spawnError' in outcome) {
    const notFound = outcome.spawnError.code === 'ENOENT';
    throw new CliError(
      `cannot run "${command[0]}": ${notFound ? 'command not found' : outcome.spawnError.message}`,
      notFound ? 127 : 126,
    );
  }
  if ('signal' in outcome) {
    ctx.out.err(`mainline: the command was killed by ${outcome.signal}; test results not uploaded`);
    return 128 + (os.constants.signals[outcome.signal] ?? 0);
  }
  const response = await uploadAfterRun(flags, ctx, startedAt);
  return outcome.code === 0 ? 0 : exitAfterFailure(outcome.code, response, ctx);
}
