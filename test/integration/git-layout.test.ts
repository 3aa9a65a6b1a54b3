import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@x',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@x',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

describe('plain-git repositories are kept apart per organization', () => {
  let t: TestApp | undefined;
  let root: string | undefined;
  afterEach(async () => {
    await t?.close();
    if (root !== undefined) fs.rmSync(root, { recursive: true, force: true });
    t = undefined;
    root = undefined;
  });

  /** Clones `remote` into the work folder and pushes one commit holding `files` as `branch`. */
  function pushCommit(remote: string, branch: string, files: Record<string, string>, message: string): void {
    const work = path.join(root!, 'work');
    execFileSync('git', ['clone', '-q', remote, work], { env: gitEnv, stdio: 'pipe' });
    git(work, 'checkout', '-q', '-b', branch);
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(work, name), content);
    git(work, 'add', '.');
    git(work, 'commit', '-qm', message);
    git(work, 'push', '-q', 'origin', branch);
  }

  async function setUp() {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-layout-'));
    t = await buildTestApp({ MAINLINE_GIT_ROOT: path.join(root, 'repos') });
    return { a: await t.token('acme'), b: await t.token('globex') };
  }

  it('two organizations naming the same repository get two bare repositories; one cannot read the other', async () => {
    const { a, b } = await setUp();
    const pathA = (await t!.post('/v1/git/createRepository', { repo: REPO }, a)).json().path as string;
    const pathB = (await t!.post('/v1/git/createRepository', { repo: REPO }, b)).json().path as string;
    expect(pathA).not.toBe(pathB);
    pushCommit(pathA, 'secret', { 'x.txt': 'x\n' }, 'secret work');
    const pr = {
      repo: REPO,
      number: 1,
      title: 'Steal',
      author: 'eve',
      headBranch: 'secret',
      baseBranch: 'main',
    };
    const stolen = await t!.post('/v1/git/registerPullRequest', pr, b);
    expect(stolen.statusCode).toBe(400);
    expect(stolen.json().error.message).toMatch(/does not exist/);
    expect((await t!.post('/v1/git/registerPullRequest', pr, a)).statusCode).toBe(200);
  });

  it('adopts a bare repository of the earlier layout into the folder of its first repository', async () => {
    const { a, b } = await setUp();
    const legacy = path.join(root!, 'repos', 'github.com', 'acme', 'web.git');
    fs.mkdirSync(legacy, { recursive: true });
    git(legacy, 'init', '-q', '--bare', '--initial-branch=main');
    pushCommit(legacy, 'main', { 'README.md': 'old\n' }, 'from before');

    const adopted = (await t!.post('/v1/git/createRepository', { repo: REPO }, a)).json().path as string;
    expect(adopted).not.toBe(legacy);
    expect(fs.existsSync(legacy)).toBe(false);
    expect(git(adopted, 'log', '--format=%s', 'main')).toBe('from before');
    const other = (await t!.post('/v1/git/createRepository', { repo: REPO }, b)).json().path as string;
    expect(() => git(other, 'rev-parse', '--verify', '--quiet', 'main')).toThrow();
  });

  it('a repository name that cannot be a folder is a 400 that says why, and creates nothing', async () => {
    const { a } = await setUp();
    const res = await t!.post(
      '/v1/git/createRepository',
      { repo: { host: 'github.com', owner: '..', name: 'x' } },
      a,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(res.json().error.message).toMatch(/cannot be a git repository/);
    const list = await t!.post('/v1/repositories/list', { page_query: { page_size: 100 } }, a);
    expect(list.statusCode).toBe(200);
    expect(JSON.stringify(list.json())).not.toContain('"owner":".."');
  });
});
