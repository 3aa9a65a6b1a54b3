import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitForge, GitInputError } from '../../src/forge/git/index.ts';
import { bareGit, commitOn, sh } from '../support/git-fixture.ts';
import { useGitFixture } from '../support/use-git-fixture.ts';

describe('repoPath', () => {
  const forge = new GitForge({ root: '/srv/mainline/repos' });

  it('maps host/owner/name to a bare repository path, GitLab groups included', () => {
    expect(forge.repoPath({ host: 'github.com', owner: 'acme', name: 'widgets' })).toBe(
      '/srv/mainline/repos/github.com/acme/widgets.git',
    );
    expect(forge.repoPath({ host: 'gitlab.example:8443', owner: 'group/sub_group', name: 'my.repo-1' })).toBe(
      '/srv/mainline/repos/gitlab.example:8443/group/sub_group/my.repo-1.git',
    );
  });

  const hostile = [
    { host: '..', owner: 'acme', name: 'x' },
    { host: 'github.com', owner: '../etc', name: 'x' },
    { host: 'github.com', owner: 'acme/..', name: 'x' },
    { host: 'github.com', owner: '/abs', name: 'x' },
    { host: 'github.com', owner: 'acme//x', name: 'x' },
    { host: 'github.com', owner: 'acme', name: '..' },
    { host: 'github.com', owner: 'acme', name: '../../x' },
    { host: 'github.com', owner: 'acme', name: '-x' },
    { host: 'github.com', owner: 'acme', name: 'a b' },
    { host: 'github.com', owner: 'acme', name: '' },
    { host: '/etc', owner: 'acme', name: 'x' },
    { host: 'github.com', owner: '.hidden', name: 'x' },
  ];
  for (const repo of hostile) {
    it(`refuses ${JSON.stringify(repo)}`, () => {
      expect(() => forge.repoPath(repo)).toThrow(GitInputError);
    });
  }
});

describe('names and SHAs given to git', () => {
  const fx = useGitFixture();
  let base: string;
  beforeEach(() => {
    base = bareGit(fx, ['rev-parse', 'main']);
  });

  const badBranches = [
    '--upload-pack=touch /tmp/pwned',
    '-x',
    '../x',
    'a/../b',
    'has space',
    'a..b',
    'x.lock',
    'refs/heads/x',
    '',
  ];
  for (const name of badBranches) {
    it(`refuses branch name ${JSON.stringify(name)} everywhere`, async () => {
      const spec = { testBranch: name, baseSha: base, prHeads: [] };
      await expect(fx.forge.buildTestBranch(fx.repo, spec)).rejects.toThrow(GitInputError);
      await expect(fx.forge.head(fx.repo, name)).rejects.toThrow(GitInputError);
      await expect(fx.forge.deleteBranch(fx.repo, name)).rejects.toThrow(GitInputError);
      await expect(fx.forge.readRequiredStatuses(fx.repo, name)).rejects.toThrow(GitInputError);
      const merge = {
        targetBranch: name,
        prNumber: 1,
        prTitle: 't',
        headSha: base,
        method: 'squash' as const,
      };
      await expect(fx.forge.mergePullRequest(fx.repo, merge)).rejects.toThrow(GitInputError);
    });
  }

  for (const sha of ['--all', 'HEAD', 'main', 'abc123', `${'A'.repeat(40)}`, `${'a'.repeat(39)}`]) {
    it(`refuses ${JSON.stringify(sha)} where a SHA is required`, async () => {
      const spec = { testBranch: 'trunk-merge/x', baseSha: sha, prHeads: [] };
      await expect(fx.forge.buildTestBranch(fx.repo, spec)).rejects.toThrow(GitInputError);
      const prSpec = { testBranch: 'trunk-merge/x', baseSha: base, prHeads: [{ number: 1, sha }] };
      await expect(fx.forge.buildTestBranch(fx.repo, prSpec)).rejects.toThrow(GitInputError);
      const merge = {
        targetBranch: 'main',
        prNumber: 1,
        prTitle: 't',
        headSha: sha,
        method: 'merge_commit' as const,
      };
      await expect(fx.forge.mergePullRequest(fx.repo, merge)).rejects.toThrow(GitInputError);
    });
  }

  it('resolves SHAs and branch names, null when absent', async () => {
    expect(await fx.forge.resolve(fx.repo, 'main')).toBe(base);
    expect(await fx.forge.resolve(fx.repo, base)).toBe(base);
    expect(await fx.forge.resolve(fx.repo, 'b'.repeat(40))).toBeNull();
    expect(await fx.forge.head(fx.repo, 'missing')).toBeNull();
    await expect(fx.forge.resolve(fx.repo, '--output=/tmp/x')).rejects.toThrow(GitInputError);
    const head = commitOn(fx, 'pr1', { 'z.txt': 'z\n' }, 'z');
    expect(await fx.forge.mergeBase(fx.repo, base, head)).toBe(base);
    await expect(fx.forge.mergeBase(fx.repo, 'main', head)).rejects.toThrow(GitInputError);
  });

  it('reads branch heads live while remembering names and merge bases (the queue runner asks every poll)', async () => {
    const first = commitOn(fx, 'pr2', { 'y.txt': 'y\n' }, 'y');
    expect(await fx.forge.head(fx.repo, 'pr2')).toBe(first);
    expect(await fx.forge.mergeBase(fx.repo, base, first)).toBe(base);
    const second = commitOn(fx, 'pr2', { 'y.txt': 'y2\n' }, 'y2');
    // The same branch name again: its head is read anew.
    expect(await fx.forge.head(fx.repo, 'pr2')).toBe(second);
    expect(await fx.forge.mergeBase(fx.repo, first, second)).toBe(first);
    expect(await fx.forge.mergeBase(fx.repo, base, first)).toBe(base);
    const orphan = commitOn(fx, 'lonely', { 'o.txt': 'o\n' }, 'o', { orphan: true });
    expect(await fx.forge.mergeBase(fx.repo, base, orphan)).toBeNull();
    expect(await fx.forge.mergeBase(fx.repo, base, orphan)).toBeNull();
    await expect(fx.forge.head(fx.repo, 'pr2.lock')).rejects.toThrow(GitInputError);
  });

  it('keeps hostile PR titles out of everything but the commit message', async () => {
    const head = commitOn(fx, 'pr1', { 'z.txt': 'z\n' }, 'z');
    const prTitle = '$(touch pwned) `id` --amend\n\nSigned-off-by: nobody';
    const result = await fx.forge.mergePullRequest(fx.repo, {
      targetBranch: 'main',
      prNumber: 1,
      prTitle,
      headSha: head,
      method: 'merge_commit',
    });
    expect(result.ok).toBe(true);
    expect(bareGit(fx, ['log', '-1', '--format=%B', 'main']).trim()).toBe(
      'Merge pull request #1: $(touch pwned) `id` --amend Signed-off-by: nobody',
    );
  });
});

describe('ensureRepository', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mainline-forge-init-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates a bare repository with default branch main that users can push to, once', async () => {
    const forge = new GitForge({ root });
    const repo = { host: 'gitlab.local', owner: 'group/sub', name: 'app' };
    const [path, again] = await Promise.all([forge.ensureRepository(repo), forge.ensureRepository(repo)]);
    expect(path).toBe(join(root, 'gitlab.local/group/sub/app.git'));
    expect(again).toBe(path);
    expect(existsSync(join(path, 'HEAD'))).toBe(true);
    expect(sh(root, [`--git-dir=${path}`, 'rev-parse', '--is-bare-repository'])).toBe('true');
    expect(sh(root, [`--git-dir=${path}`, 'symbolic-ref', 'HEAD'])).toBe('refs/heads/main');
    expect(await forge.head(repo, 'main')).toBeNull();
    expect(await forge.listBranches(repo, '')).toEqual([]);
  });
});
