/**
 * A push to the target between the queue's decision to merge and the merge itself, on a real git
 * repository with the real runner: the PR's run passed on the old tip, so merging it now would put it
 * on a history it was never tested on. The forge refuses (compare-and-swap on the tip the run proved),
 * and the PR is tested again on the new tip instead of failing or landing untested.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_IDENTITY, DEFAULT_TIMEOUT_MS } from '../../src/forge/git/git.ts';
import { mergePullRequest } from '../../src/forge/git/merge.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { pendingQueueActions, type StoredQueueAction } from '../support/reads.ts';

describe('a push to the target while a merge is on its way', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /** PR 1 tested and passed on main's first commit; its merge waits in the outbox (the runner has not run). */
  async function passedAndWaiting(): Promise<{ s: GitScenario; tested: string }> {
    const scenario = await GitScenario.create({ directMergeMode: 'off' });
    s = scenario;
    const tested = scenario.bareGit('rev-parse', 'main');
    await scenario.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await scenario.submit(1);
    await scenario.settle();
    expect((await scenario.pr(1)).state).toBe('testing');
    await scenario.ci('success');
    const merge = (await pendingQueueActions(scenario.t)).find((a) => a.type === 'merge_pr');
    expect(merge).toMatchObject({ prNumber: 1, expectedTargetSha: tested });
    return { s: scenario, tested };
  }

  it('does not merge the PR onto the push: it is tested again on the new tip, then merged', async () => {
    const { s } = await passedAndWaiting();
    s.pushToMain({ 'pushed.txt': 'from outside\n' }, 'Outside push');
    const pushed = s.bareGit('rev-parse', 'main');

    await s.settle();
    expect(s.history()).toEqual(['Outside push', 'Initial commit']);
    const pr = await s.pr(1);
    expect(pr.state, pr.stateReason).toBe('testing');
    const [retest] = await s.runsInProgress();
    expect(retest?.tested).toEqual([1]);
    // The new test branch holds the push: what CI now tests is what will land.
    expect(isAncestor(s, pushed, retest?.sha ?? '')).toBe(true);

    await s.ci('success');
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Outside push', 'Initial commit']);
    expect((await s.pr(1)).state).toBe('merged');
  });

  it('a merge action saved before it carried the tip is checked against the tip in the queue state', async () => {
    const { s } = await passedAndWaiting();
    // What an older version stored: merge_pr without expectedTargetSha.
    const db = s.t.db.database.db;
    for (const row of await db.selectFrom('queue_actions').select(['id', 'action']).execute()) {
      const action = JSON.parse(row.action) as StoredQueueAction;
      if (action.type !== 'merge_pr') continue;
      delete action.expectedTargetSha;
      await db
        .updateTable('queue_actions')
        .set({ action: JSON.stringify(action) })
        .where('id', '=', row.id)
        .execute();
    }
    s.pushToMain({ 'pushed.txt': 'from outside\n' }, 'Outside push');
    await s.settle();
    expect(s.history()).toEqual(['Outside push', 'Initial commit']);
    expect((await s.pr(1)).state).toBe('testing');
  });

  it('a merge that landed before the runner stopped is recognised when it is carried out again', async () => {
    const { s, tested } = await passedAndWaiting();
    const merge = (await pendingQueueActions(s.t)).find((a) => a.type === 'merge_pr');
    // The runner merged, then died before recording it: main moved, by our own merge.
    const landed = await mergePullRequest(
      { gitDir: s.bare, identity: DEFAULT_IDENTITY, timeoutMs: DEFAULT_TIMEOUT_MS },
      {
        targetBranch: 'main',
        prNumber: 1,
        prTitle: 'Add a',
        headSha: s.bareGit('rev-parse', 'feature-1'),
        expectedTargetSha: tested,
        method: 'squash',
      },
    );
    expect(landed.ok).toBe(true);
    expect(merge?.expectedTargetSha).toBe(tested);
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
    const pr = await s.pr(1);
    expect(pr.state, pr.stateReason).toBe('merged');
  });
});

function isAncestor(s: GitScenario, ancestor: string, descendant: string): boolean {
  try {
    execFileSync('git', ['--git-dir', s.bare, 'merge-base', '--is-ancestor', ancestor, descendant]);
    return true;
  } catch {
    return false;
  }
}
