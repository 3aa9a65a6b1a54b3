// `mainline` explains itself (issue 24): bare `mainline`, `--help`, `help <command>` and every
// `<command> --help` print help and exit 0 without starting anything, and the client commands load
// none of the server's code (no Fastify, no database drivers, no demo), which is what makes them start fast.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/process.ts';

// The sources (tsx), so the modules traced are src/ ones; bin/mainline.mjs runs the same code built.
const BIN = path.resolve(import.meta.dirname, '../../scripts/mainline-ts.mjs');
const COMMANDS = ['serve', 'migrate', 'token', 'github', 'upload', 'test', 'demo'];

describe('mainline help', () => {
  it('bare mainline prints the usage and exits 0 instead of starting a server', async () => {
    const res = await runCli([], { PORT: '1' });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Usage: mainline <command>');
    expect(res.stdout).toContain('serve');
    expect(res.stderr).toBe('');
  });

  it.each([['--help'], ['-h'], ['help']])('mainline %s prints the usage and exits 0', async (flag) => {
    const res = await runCli([flag], {});
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Usage: mainline <command>');
    for (const command of COMMANDS) expect(res.stdout).toContain(`  ${command} `);
  });

  it.each(COMMANDS)(
    'mainline %s --help prints that command’s help, as mainline help <command> does',
    async (command) => {
      // No configuration at all: help needs none, and must not open a database or listen.
      const res = await runCli([command, '--help'], { PORT: 'not-a-port', DATABASE_URL: 'nonsense' });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain(`Usage: mainline ${command}`);
      expect(res.stderr).toBe('');
      const viaHelp = await runCli(['help', command], {});
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toBe(res.stdout);
    },
  );

  it('-h and --help anywhere before -- ask for help; after -- they belong to the command test runs', async () => {
    expect((await runCli(['upload', '--junit', 'x.xml', '-h'], {})).stdout).toContain(
      'Usage: mainline upload',
    );
    expect((await runCli(['token', 'create', '--help'], {})).stdout).toContain('Usage: mainline token');
    const res = await runCli(['test', '--junit', 'none.xml', '--', 'sh', '-c', 'exit 7', 'sh', '--help'], {});
    expect(res.code).toBe(7);
    expect(res.stdout).not.toContain('Usage: mainline');
    expect(res.stderr).toContain('test results not uploaded');
  });

  it('a command line it cannot understand gets that command’s usage and exit code 2', async () => {
    const res = await runCli(['upload', '--junit', 'x.xml', '--frobnicate'], {});
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("Unknown option '--frobnicate'");
    expect(res.stderr).toContain('Usage: mainline upload');
    const help = await runCli(['help', 'frobnicate'], {});
    expect(help.code).toBe(2);
    expect(help.stderr).toContain('no help for "frobnicate"');
  });
});

describe('what the client commands load', () => {
  let dir: string;
  let hook: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-cli-loads-'));
    // A module hook that writes every module URL the process resolves to MAINLINE_TRACE_FILE.
    fs.writeFileSync(
      path.join(dir, 'hooks.mjs'),
      `import fs from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  fs.appendFileSync(process.env.MAINLINE_TRACE_FILE, r.url + '\\n');
  return r;
}
`,
    );
    hook = path.join(dir, 'register.mjs');
    fs.writeFileSync(
      hook,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});\n`,
    );
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function loadedBy(args: string[]): Promise<string[]> {
    const trace = path.join(dir, `trace-${args.join('_').replace(/\W/g, '')}-${Date.now()}.txt`);
    fs.writeFileSync(trace, '');
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', hook, BIN, ...args],
        { env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'silent', MAINLINE_TRACE_FILE: trace } },
        (error) => {
          // Exit codes are the commands' business here (upload without a server exits 1).
          if (error !== null && typeof error.code !== 'number') reject(error);
          else resolve(fs.readFileSync(trace, 'utf8').split('\n').filter(Boolean));
        },
      );
    });
  }

  /** Module URLs of the server side: the HTTP app, the database, the demo, and their libraries. */
  const SERVER_SIDE =
    /\/src\/(http|db|store|demo|runner|forge|web)\/|\/src\/main\.|node_modules\/(fastify|kysely|better-sqlite3|pg|prom-client|@octokit|typebox)\//;

  it.each([
    [['--help']],
    [['upload', '--help']],
    [['test', '--help']],
    [
      [
        'upload',
        '--junit',
        'none.xml',
        '--repo',
        'a/b',
        '--branch',
        'm',
        '--sha',
        'abc',
        '--token',
        't',
        '--org',
        'o',
      ],
    ],
  ])('mainline %j loads none of the server side', async (args) => {
    const loaded = await loadedBy(args);
    expect(loaded.some((url) => url.includes('/cli/main.'))).toBe(true);
    expect(loaded.filter((url) => SERVER_SIDE.test(url))).toEqual([]);
  });

  it('mainline migrate --help loads none of it either, while mainline migrate does', async () => {
    expect((await loadedBy(['migrate', '--help'])).filter((url) => SERVER_SIDE.test(url))).toEqual([]);
    const data = path.join(dir, 'data');
    const trace = await new Promise<string[]>((resolve) => {
      const file = path.join(dir, 'trace-migrate.txt');
      fs.writeFileSync(file, '');
      execFile(
        process.execPath,
        ['--import', hook, BIN, 'migrate'],
        { env: { PATH: process.env['PATH'] ?? '', MAINLINE_DATA_DIR: data, MAINLINE_TRACE_FILE: file } },
        () => resolve(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)),
      );
    });
    expect(trace.some((url) => url.includes('node_modules/kysely/'))).toBe(true);
  });
});
