// Drives one request with wrk (https://github.com/wg/wrk), a C load generator that does not share
// the bench process's event loop: the API is POST + JSON, so each run gets a Lua script of its own
// (wrk.method, wrk.headers, wrk.body, or a request() function cycling through several bodies) in a
// temporary file. The script's done() prints the figures as one JSON line; `--latency` also prints
// wrk's own latency distribution, kept in the raw output.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface WrkRequest {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  /** Bodies used in turn (empty for a GET). */
  readonly bodies: readonly string[];
}

export interface WrkResult {
  /** Completed requests per second over the run. */
  readonly rps: number;
  readonly requests: number;
  /** Latency percentiles and maximum, milliseconds (wrk measures in microseconds). */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  /** Non-2xx/3xx answers plus connect, read, write errors and timeouts. */
  readonly failed: number;
  /** wrk's stdout (with --latency's distribution), for the log when something looks wrong. */
  readonly raw: string;
}

const MARK = 'WRK_JSON ';

/** A Lua string literal of any bytes: printable ASCII as is, everything else as a decimal escape. */
export function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c) out += String.fromCharCode(byte);
    else out += `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** The Lua script of one request. */
export function wrkScript(request: WrkRequest): string {
  const lines = [`wrk.method = ${luaString(request.method)}`];
  for (const [name, value] of Object.entries(request.headers)) {
    lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  }
  if (request.bodies.length === 1) {
    lines.push(`wrk.body = ${luaString(request.bodies[0] ?? '')}`);
  } else if (request.bodies.length > 1) {
    lines.push('local bodies = {');
    for (const body of request.bodies) lines.push(`  ${luaString(body)},`);
    lines.push('}');
    lines.push(
      'local turn = 0',
      'request = function()',
      '  turn = turn % #bodies + 1',
      '  return wrk.format(nil, nil, nil, bodies[turn])',
      'end',
    );
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    `  io.write(string.format("${MARK}{\\"requests\\":%d,\\"duration_us\\":%d,\\"p50\\":%d,\\"p90\\":%d,\\"p99\\":%d,\\"max\\":%d,\\"status\\":%d,\\"connect\\":%d,\\"read\\":%d,\\"write\\":%d,\\"timeout\\":%d}\\n",`,
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),',
    '    latency:percentile(99), latency.max, e.status, e.connect, e.read, e.write, e.timeout))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

interface DoneJson {
  requests: number;
  duration_us: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  status: number;
  connect: number;
  read: number;
  write: number;
  timeout: number;
}

/** Runs wrk for `duration` seconds with `connections` connections over `threads` threads. */
export async function runWrk(
  wrk: string,
  request: WrkRequest,
  options: { duration: number; connections: number; threads: number },
): Promise<WrkResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-bench-wrk-'));
  const script = path.join(dir, 'request.lua');
  fs.writeFileSync(script, wrkScript(request));
  try {
    const threads = Math.max(1, Math.min(options.threads, options.connections));
    const args = [
      `-t${threads}`,
      `-c${options.connections}`,
      `-d${Math.max(1, Math.round(options.duration))}s`,
      '--timeout',
      '30s',
      '--latency',
      '-s',
      script,
      request.url,
    ];
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(wrk, args, { maxBuffer: 4 * 1024 * 1024 }, (error, out, err) => {
        if (error !== null)
          reject(new Error(`wrk ${args.join(' ')} failed: ${String(err).trim() || error.message}`));
        else resolve(String(out));
      });
    });
    const line = stdout.split('\n').find((l) => l.startsWith(MARK));
    if (line === undefined) throw new Error(`wrk printed no summary:\n${stdout}`);
    const d = JSON.parse(line.slice(MARK.length)) as DoneJson;
    return {
      rps: d.duration_us > 0 ? d.requests / (d.duration_us / 1e6) : Number.NaN,
      requests: d.requests,
      p50: d.p50 / 1000,
      p90: d.p90 / 1000,
      p99: d.p99 / 1000,
      max: d.max / 1000,
      failed: d.status + d.connect + d.read + d.write + d.timeout,
      raw: stdout,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
