// How long the `mainline` command takes to start: `node --import tsx bench/cli-start.ts`. Spawns
// `mainline --help` and `mainline upload --help` BENCH_CLI_RUNS times each (default 10) and prints the
// median, the fastest and the slowest wall time (after one uncounted run), beside `node -e 0` (Node's own start) on the same machine.
// The command run is BENCH_CLI (e.g. "node dist/bin/mainline.js"), else `node <bin>` where <bin> is the
// entry package.json's "bin" names (the built one once there is a build), else `node bin/mainline.mjs`.
// Exits 1 when a median exceeds BENCH_CLI_LIMIT_MS (unset: no limit); issue 24 asks for < 300 ms.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

function positive(name: string, fallback: number | undefined): number | undefined {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** The command line that starts `mainline`, as [program, ...args]. */
function cliCommand(): string[] {
  const given = process.env['BENCH_CLI']?.trim();
  if (given) return given.split(/\s+/);
  let entry = 'bin/mainline.mjs';
  try {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.['mainline'];
    if (bin !== undefined && existsSync(path.join(ROOT, bin))) entry = bin;
  } catch {
    // No readable package.json: the source entry.
  }
  return [process.execPath, path.join(ROOT, entry)];
}

interface Timing {
  readonly label: string;
  readonly medianMs: number;
  readonly minMs: number;
  readonly maxMs: number;
}

function time(label: string, argv: readonly string[], runs: number): Timing {
  const [program, ...args] = argv as [string, ...string[]];
  const samples: number[] = [];
  // One run first, not counted: it fills the file-system cache (and tsx's compile cache when run from source).
  for (let i = -1; i < runs; i++) {
    const start = process.hrtime.bigint();
    const result = spawnSync(program, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env } });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (result.status !== 0) {
      throw new Error(`${argv.join(' ')} exited with ${result.status}: ${result.stderr.slice(0, 500)}`);
    }
    if (i >= 0) samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  const mid = Math.floor(samples.length / 2);
  const median =
    samples.length % 2 === 1
      ? (samples[mid] as number)
      : ((samples[mid - 1] as number) + (samples[mid] as number)) / 2;
  return { label, medianMs: median, minMs: samples[0] as number, maxMs: samples.at(-1) as number };
}

function main(): number {
  const runs = positive('BENCH_CLI_RUNS', 10) as number;
  const limit = positive('BENCH_CLI_LIMIT_MS', undefined);
  const cli = cliCommand();
  const shown = cli.map((a) => (a === process.execPath ? 'node' : path.relative(ROOT, a) || a)).join(' ');
  console.log(`mainline start-up: ${shown}, ${runs} runs each, Node ${process.version}`);
  const rows = [
    time('node -e 0', [process.execPath, '-e', '0'], runs),
    time('mainline --help', [...cli, '--help'], runs),
    time('mainline upload --help', [...cli, 'upload', '--help'], runs),
  ];
  for (const r of rows) {
    console.log(
      `  ${r.label.padEnd(24)} median ${r.medianMs.toFixed(0).padStart(5)} ms  (fastest ${r.minMs.toFixed(0)}, slowest ${r.maxMs.toFixed(0)})`,
    );
  }
  const slow = limit === undefined ? [] : rows.slice(1).filter((r) => r.medianMs > limit);
  for (const r of slow) console.log(`  ${r.label}: median ${r.medianMs.toFixed(0)} ms is over ${limit} ms`);
  return slow.length > 0 ? 1 : 0;
}

process.exitCode = main();
