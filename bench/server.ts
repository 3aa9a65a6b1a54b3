// Starts the real server (bin/mainline.mjs serve) or the bare Fastify baseline as child processes on
// loopback, so the load generator and the server do not share an event loop.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, ROOT, sleep } from './common.ts';

export interface ChildServer {
  readonly url: string;
  readonly pid: number;
  /** Peak and current resident set size of the server process, in bytes (Linux /proc). */
  memory(): { peak: number; current: number };
  /**
   * CPU seconds the server process has used (user + system, Linux /proc): all its threads, and its
   * request thread (the main thread) alone.
   */
  cpu(): { total: number; main: number };
  /** What the server printed (warnings and errors only at LOG_LEVEL=warn). */
  output(): string;
  stop(): Promise<void>;
}

function procMemory(pid: number): { peak: number; current: number } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) =>
      Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))?.[1] ?? Number.NaN);
    return { peak: kb('VmHWM') * 1024, current: kb('VmRSS') * 1024 };
  } catch {
    return { peak: Number.NaN, current: Number.NaN };
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS = 100;

function cpuSeconds(statFile: string): number {
  try {
    const stat = fs.readFileSync(statFile, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return Number.NaN;
  }
}

function procCpu(pid: number): { total: number; main: number } {
  return { total: cpuSeconds(`/proc/${pid}/stat`), main: cpuSeconds(`/proc/${pid}/task/${pid}/stat`) };
}

async function waitReady(child: ChildProcess, url: string, logs: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`server exited before it was ready:\n${logs()}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`server not ready after 120 s:\n${logs()}`);
}

async function launch(args: string[], env: Record<string, string>, readyPath: string): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const keep = (d: Buffer) => {
    text = (text + d.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `${url}${readyPath}`, () => text);
  const pid = child.pid ?? -1;
  return {
    url,
    pid,
    memory: () => procMemory(pid),
    cpu: () => procCpu(pid),
    output: () => text,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export type DatabaseLocation = { dataDir: string } | { databaseUrl: string };

/**
 * `mainline serve` with rate limiting and the periodic health pass off, logging warnings only.
 * gitRoot: the plain-git forge's folder (MAINLINE_GIT_ROOT); without it, a PostgreSQL server would
 * use ./data/git of the checkout.
 */
export function startMainline(
  database: DatabaseLocation,
  options: { gitRoot?: string } = {},
): Promise<ChildServer> {
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    MAINLINE_RATE_LIMIT: '0',
    MAINLINE_HEALTH_SWEEP_SECONDS: '0',
    ...(options.gitRoot !== undefined ? { MAINLINE_GIT_ROOT: options.gitRoot } : {}),
  };
  if ('dataDir' in database) env['MAINLINE_DATA_DIR'] = database.dataDir;
  else env['DATABASE_URL'] = database.databaseUrl;
  // BENCH_FROM_SOURCES=1: the TypeScript sources through tsx (scripts/mainline-ts.mjs) instead of
  // dist/, for a working tree whose dist/ is being rebuilt meanwhile.
  const entry = ['1', 'true'].includes(process.env['BENCH_FROM_SOURCES']?.trim() ?? '')
    ? path.join(ROOT, 'scripts', 'mainline-ts.mjs')
    : path.join(ROOT, 'bin', 'mainline.mjs');
  return launch([entry, 'serve'], env, '/healthz');
}

/** The bare Fastify server of bench/baseline-server.ts (env: BENCH_ANSWERS, the same-bytes answers). */
export function startBaseline(env: Record<string, string> = {}): Promise<ChildServer> {
  return launch(['--import', 'tsx', path.join(ROOT, 'bench', 'baseline-server.ts')], env, '/healthz');
}
