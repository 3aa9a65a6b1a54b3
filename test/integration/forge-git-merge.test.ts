import { describe, expect, it } from 'vitest';
import type { MergeRequest } from '../../src/forge/git/index.ts';
import { bareGit, commitOn, fileAt, history, lines, sh } from '../support/git-fixture.ts';
import { useGitFixture } from '../support/use-git-fixture.ts';

const fx = useGitFixture();

const ALICE = { name: 'Alice Author', email: 'alice@example.com' };
const BOB = { name: 'Bob Builder', email: 'bob@example.com' };

function main(): string {
  return bareGit(fx, ['rev-parse', 'refs/heads/main']);
}

function authorOf(ref: string): string {
  return bareGit(fx, ['log', '-1', '--format=%an <%ae>|%cn <%ce>', ref]);
}

/** main gets "upstream" (c.txt line 10); PR #7 has two commits by Alice and Bob touching a.txt and b.txt. */
function setup(): { base: string; upstream: string; head: string; request: Omit<MergeRequest, 'method'> } {
  const base = main();
  commitOn(fx, 'pr7', { 'a.txt': lines('a', { 1: 'A1' }) }, 'first change', { author: ALICE });
  const head = commitOn(fx, 'pr7', { 'b.txt': lines('b', { 2: 'B2' }) }, 'second change', { author: BOB });
  const upstream = commitOn(fx, 'main', { 'c.txt': lines('c', { 10: 'C10' }) }, 'upstream');
  return {
    base,
    upstream,
    head,
    request: { targetBranch: 'main', prNumber: 7, prTitle: 'Add\nthings', headSha: head },
  };
}

function expectAllChanges(sha: string): void {
  expect(fileAt(fx, sha, 'a.txt')).toBe(lines('a', { 1: 'A1' }));
  expect(fileAt(fx, sha, 'b.txt')).toBe(lines('b', { 2: 'B2' }));
  expect(fileAt(fx, sha, 'c.txt')).toBe(lines('c', { 10: 'C10' }));
}

describe('mergePullRequest', () => {
  it('merge_commit: a merge commit with parents (target head, PR head)', async () => {
    const { upstream, head, request } = setup();
    const result = await fx.forge.mergePullRequest(fx.repo, { ...request, method: 'merge_commit' });
    expect(result).toEqual({ ok: true, newTargetSha: main() });
    expect(history(fx, 'main')).toEqual([
      { subject: 'Merge pull request #7: Add things', parents: [upstream, head] },
      { subject: 'upstream', parents: [expect.any(String)] },
      { subject: 'initial', parents: [] },
    ]);
    expect(authorOf('main')).toBe('Mainline <mainline@localhost>|Mainline <mainline@localhost>');
    expectAllChanges(main());
  });

  it('squash: one commit on the target with the combined changes, authored by the PR head author', async () => {
    const { upstream, request } = setup();
    const result = await fx.forge.mergePullRequest(fx.repo, { ...request, method: 'squash' });
    expect(result).toEqual({ ok: true, newTargetSha: main() });
    expect(history(fx, 'main')).toEqual([
      { subject: 'Add things (#7)', parents: [upstream] },
      { subject: 'upstream', parents: [expect.any(String)] },
      { subject: 'initial', parents: [] },
    ]);
    expect(authorOf('main')).toBe('Bob Builder <bob@example.com>|Mainline <mainline@localhost>');
    expect(bareGit(fx, ['log', '-1', '--format=%b', 'main']).trim()).toBe('* first change\n* second change');
    expectAllChanges(main());
  });

  it('rebase: replays each PR commit on the target, keeping authors and messages', async () => {
    const { upstream, head, request } = setup();
    const result = await fx.forge.mergePullRequest(fx.repo, { ...request, method: 'rebase' });
    expect(result).toEqual({ ok: true, newTargetSha: main() });
    const log = history(fx, 'main');
    expect(log.map((c) => c.subject)).toEqual(['second change', 'first change', 'upstream', 'initial']);
    expect(log[1]?.parents).toEqual([upstream]);
    expect(log[0]?.parents).toEqual([bareGit(fx, ['rev-parse', 'main~1'])]);
    expect(main()).not.toBe(head);
    expect(authorOf('main')).toBe('Bob Builder <bob@example.com>|Mainline <mainline@localhost>');
    expect(authorOf('main~1')).toBe('Alice Author <alice@example.com>|Mainline <mainline@localhost>');
    expect(fileAt(fx, 'main~1', 'b.txt')).toBe(lines('b'));
    expectAllChanges(main());
  });

  it('rebase drops a commit whose change the target already has', async () => {
    const base = main();
    commitOn(fx, 'pr5', { 'a.txt': lines('a', { 1: 'A1' }) }, 'already upstream');
    const head = commitOn(fx, 'pr5', { 'b.txt': lines('b', { 1: 'B1' }) }, 'new work');
    const upstream = commitOn(fx, 'main', { 'a.txt': lines('a', { 1: 'A1' }) }, 'same change upstream');
    const request = {
      targetBranch: 'main',
      prNumber: 5,
      prTitle: 't',
      headSha: head,
      method: 'rebase' as const,
    };
    expect((await fx.forge.mergePullRequest(fx.repo, request)).ok).toBe(true);
    expect(history(fx, 'main')).toEqual([
      { subject: 'new work', parents: [upstream] },
      { subject: 'same change upstream', parents: [base] },
      { subject: 'initial', parents: [] },
    ]);
  });

  it('rebase refuses a PR containing a merge commit', async () => {
    const { request } = setup();
    commitOn(fx, 'side', { 'd.txt': 'd\n' }, 'side');
    sh(fx.work, ['checkout', '--quiet', '-B', 'pr7', 'origin/pr7']);
    sh(fx.work, ['merge', '--quiet', '--no-edit', 'origin/side']);
    sh(fx.work, ['push', '--quiet', 'origin', 'HEAD:refs/heads/pr7']);
    const headSha = sh(fx.work, ['rev-parse', 'HEAD']);
    const before = main();
    const result = await fx.forge.mergePullRequest(fx.repo, { ...request, headSha, method: 'rebase' });
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.reason).toContain('merge commit');
    expect(main()).toBe(before);
  });

  for (const method of ['merge_commit', 'squash', 'rebase'] as const) {
    it(`${method}: a conflict fails with the paths and leaves the target alone`, async () => {
      const head = commitOn(fx, 'pr8', { 'a.txt': lines('a', { 4: 'mine' }) }, 'pr change');
      const target = commitOn(fx, 'main', { 'a.txt': lines('a', { 4: 'theirs' }) }, 'main change');
      const request = { targetBranch: 'main', prNumber: 8, prTitle: 't', headSha: head, method };
      const result = await fx.forge.mergePullRequest(fx.repo, request);
      expect(result).toEqual({ ok: false, reason: expect.stringContaining('conflict in a.txt') });
      expect(main()).toBe(target);
    });

    it(`${method}: a PR already contained in the target is a no-op success`, async () => {
      const head = commitOn(fx, 'pr9', { 'a.txt': lines('a', { 4: 'x' }) }, 'pr change');
      const target = commitOn(fx, 'after-pr9', { 'b.txt': lines('b', { 4: 'y' }) }, 'later', { from: 'pr9' });
      bareGit(fx, ['update-ref', 'refs/heads/main', target]);
      const request = { targetBranch: 'main', prNumber: 9, prTitle: 't', headSha: head, method };
      expect(await fx.forge.mergePullRequest(fx.repo, request)).toEqual({ ok: true, newTargetSha: target });
      expect(main()).toBe(target);
    });
  }

  it('loses the race to a concurrent push instead of overwriting it', async () => {
    const { request } = setup();
    const prepared = await fx.forge.prepareMerge(fx.repo, { ...request, method: 'squash' });
    if (!prepared.ok) throw new Error(prepared.reason);
    const pushed = commitOn(fx, 'main', { 'e.txt': 'pushed meanwhile\n' }, 'concurrent push');
    const moved = await fx.forge.advanceBranch(fx.repo, 'main', prepared.newSha, prepared.targetSha);
    expect(moved).toEqual({
      ok: false,
      reason: expect.stringContaining(`moved to ${pushed}`),
      movedTo: pushed,
    });
    expect(main()).toBe(pushed);
    const retried = await fx.forge.mergePullRequest(fx.repo, { ...request, method: 'squash' });
    expect(retried.ok).toBe(true);
    expect(history(fx, 'main').map((c) => c.subject)).toEqual([
      'Add things (#7)',
      'concurrent push',
      'upstream',
      'initial',
    ]);
  });

  it('refuses when the target is not at expectedTargetSha', async () => {
    const { base, upstream, request } = setup();
    const result = await fx.forge.mergePullRequest(fx.repo, {
      ...request,
      expectedTargetSha: base,
      method: 'merge_commit',
    });
    expect(result).toEqual({
      ok: false,
      reason: `main is at ${upstream}, expected ${base}`,
      targetMovedTo: upstream,
    });
    expect(main()).toBe(upstream);
  });

  it('fails cleanly for an unknown head or target branch', async () => {
    const { request } = setup();
    const unknown = await fx.forge.mergePullRequest(fx.repo, {
      ...request,
      headSha: 'a'.repeat(40),
      method: 'squash',
    });
    expect(unknown).toEqual({ ok: false, reason: expect.stringContaining('not in the repository') });
    const noTarget = await fx.forge.mergePullRequest(fx.repo, {
      ...request,
      targetBranch: 'gone',
      method: 'squash',
    });
    expect(noTarget).toEqual({ ok: false, reason: 'target branch gone does not exist' });
  });
});
