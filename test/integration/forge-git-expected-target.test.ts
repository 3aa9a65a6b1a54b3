/**
 * The plain-git forge's merge with expectedTargetSha: the tip the PR was tested on. A push to the target
 * in between makes it refuse (targetMovedTo) instead of merging onto the push; a merge of its own whose
 * answer was lost (the target moved because of it) is still a success when asked again.
 */
import { describe, expect, it } from 'vitest';
import { bareGit, commitOn, history, lines } from '../support/git-fixture.ts';
import { useGitFixture } from '../support/use-git-fixture.ts';

const fx = useGitFixture();

const main = () => bareGit(fx, ['rev-parse', 'refs/heads/main']);

/** PR #7 with two commits off main; `tested` is main's tip when the queue proved it. */
function setup() {
  const tested = main();
  commitOn(fx, 'pr7', { 'a.txt': lines('a', { 1: 'A1' }) }, 'first change');
  const head = commitOn(fx, 'pr7', { 'b.txt': lines('b', { 2: 'B2' }) }, 'second change');
  const request = { targetBranch: 'main', prNumber: 7, prTitle: 'Add things', headSha: head };
  return { tested, head, request };
}

describe('mergePullRequest with expectedTargetSha', () => {
  for (const method of ['merge_commit', 'squash', 'rebase'] as const) {
    it(`${method}: refuses with targetMovedTo when someone pushed after the PR was tested`, async () => {
      const { tested, request } = setup();
      const pushed = commitOn(fx, 'main', { 'c.txt': 'pushed\n' }, 'outside push');
      const result = await fx.forge.mergePullRequest(fx.repo, {
        ...request,
        method,
        expectedTargetSha: tested,
      });
      expect(result).toEqual({ ok: false, reason: expect.stringContaining(tested), targetMovedTo: pushed });
      expect(main()).toBe(pushed);
    });

    it(`${method}: a repeated merge whose answer was lost succeeds with the commit it made`, async () => {
      const { tested, request } = setup();
      const first = await fx.forge.mergePullRequest(fx.repo, {
        ...request,
        method,
        expectedTargetSha: tested,
      });
      if (!first.ok) throw new Error(first.reason);
      const subjects = history(fx, 'main').map((c) => c.subject);
      const again = await fx.forge.mergePullRequest(fx.repo, {
        ...request,
        method,
        expectedTargetSha: tested,
      });
      expect(again).toEqual({ ok: true, newTargetSha: first.newTargetSha });
      expect(history(fx, 'main').map((c) => c.subject)).toEqual(subjects);
      // A push after our lost merge: still our merge, answered as such (the queue then sees the push).
      const pushed = commitOn(fx, 'main', { 'c.txt': 'later\n' }, 'later push');
      const late = await fx.forge.mergePullRequest(fx.repo, {
        ...request,
        method,
        expectedTargetSha: tested,
      });
      expect(late).toEqual({ ok: true, newTargetSha: first.newTargetSha });
      expect(main()).toBe(pushed);
    });
  }

  it('a push that is not the PR, on top of the tested tip, is not mistaken for its merge', async () => {
    const { tested, request } = setup();
    // The same files as the PR's first commit only: not the tree the PR's merge makes.
    const pushed = commitOn(fx, 'main', { 'a.txt': lines('a', { 1: 'A1' }) }, 'Add things (#7)');
    const result = await fx.forge.mergePullRequest(fx.repo, {
      ...request,
      method: 'squash',
      expectedTargetSha: tested,
    });
    expect(result).toMatchObject({ ok: false, targetMovedTo: pushed });
  });
});
