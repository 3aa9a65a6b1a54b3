// git runs from a thread of its own (src/forge/git/spawner.ts): what it answers must be what git
// answered, request by request, whatever the order processes finish in.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDENTITY, GitCommandError, gitOut, runGit } from '../../src/forge/git/git.ts';
import { runProcess } from '../../src/forge/git/spawner.ts';

const options = {
  env: { PATH: process.env['PATH'] ?? '' },
  timeout: 10_000,
  killSignal: 'SIGKILL' as const,
  maxBuffer: 1 << 20,
};

describe('git from the spawn thread', () => {
  let dir: string;
  let ctx: { gitDir: string; identity: typeof DEFAULT_IDENTITY; timeoutMs: number };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mainline-spawner-'));
    ctx = { gitDir: join(dir, 'repo.git'), identity: DEFAULT_IDENTITY, timeoutMs: 10_000 };
    await runProcess('git', ['init', '--bare', '-q', ctx.gitDir], options, '');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('hands git its standard input and returns its output', async () => {
    const sha = await gitOut(ctx, ['hash-object', '-w', '--stdin'], { input: 'hello\n' });
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await gitOut(ctx, ['cat-file', '-p', sha])).toBe('hello');
  });

  it('answers each of many concurrent calls with its own output', async () => {
    const texts = Array.from({ length: 60 }, (_, i) => `blob ${i} ${'x'.repeat(i * 97)}\n`);
    const shas = await Promise.all(
      texts.map((t) => gitOut(ctx, ['hash-object', '-w', '--stdin'], { input: t })),
    );
    const back = await Promise.all(shas.map((s) => runGit(ctx, ['cat-file', '-p', s])));
    expect(back.map((r) => r.stdout)).toEqual(texts);
  });

  it('accepts the exit codes it is told are answers and throws GitCommandError for others', async () => {
    const missing = '0'.repeat(40);
    const ok = await runGit(ctx, ['cat-file', '-e', missing], { okCodes: [1, 128] });
    expect(ok.code).not.toBe(0);
    const failed = await runGit(ctx, ['cat-file', '-p', missing]).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(GitCommandError);
    expect((failed as GitCommandError).code).toBe(128);
    expect((failed as GitCommandError).message).toMatch(/exit 128/);
  });

  it('reports a process killed at its timeout, or one that cannot start, with no exit code', async () => {
    const slept = await runProcess('sleep', ['10'], { ...options, timeout: 100 }, '');
    expect(slept.code).toBeNull();
    const missing = await runProcess('mainline-no-such-program', [], options, '');
    expect(missing.code).toBeNull();
  });
});
