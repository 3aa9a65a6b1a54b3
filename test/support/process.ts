import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

// The CLI from the TypeScript sources under test (bin/mainline.mjs runs the build in dist/).
const BIN = path.resolve(import.meta.dirname, '../../scripts/mainline-ts.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `mainline <args>` as a user would, with only the given environment on top of PATH. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

export interface RunningServer {
  readonly child: ChildProcess;
  readonly url: string;
  /** Every log line the server printed so far. */
  readonly logs: string[];
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `mainline serve` on a free loopback port and resolves once it listens. */
export function startServerProcess(env: Record<string, string>): Promise<RunningServer> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { PATH: process.env['PATH'] ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    exited.then((code) => reject(new Error(`server exited with ${code} before listening: ${stderr}`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      logs.push(line);
      const match = line.match(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/);
      if (match?.[1] !== undefined) {
        resolve({
          child,
          url: match[1],
          logs,
          stop: (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
  });
}
