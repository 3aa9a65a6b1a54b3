import { describe, expect, it } from 'vitest';
import { getTestingDetails, listQueuedPrs } from '../../../src/domain/queue/index.ts';
import { REQUIRED_CHECK, Scenario } from './dsl.ts';

describe('single mode', () => {
  it('tests each PR on top of the ones ahead and merges them in queue order', () => {
    const q = new Scenario({ settings: { concurrency: 3 } });
    q.submitAll(1, 2, 3);

    expect(q.contents(q.runOf(1))).toEqual({ base: 'main-0', ahead: [], tested: [1] });
    expect(q.contents(q.runOf(2))).toEqual({ base: 'main-0', ahead: [1], tested: [2] });
    expect(q.contents(q.runOf(3))).toEqual({ base: 'main-0', ahead: [1, 2], tested: [3] });
    expect(q.states(1, 2, 3)).toEqual({ 1: 'testing', 2: 'testing', 3: 'testing' });

    q.pass(3);
    q.pass(2);
    expect(q.merged).toEqual([]);
    expect(q.states(2, 3)).toEqual({ 2: 'tests_passed', 3: 'tests_passed' });

    q.pass(1);
    expect(q.merged).toEqual([1, 2, 3]);
    expect(q.states(1, 2, 3)).toEqual({ 1: 'merged', 2: 'merged', 3: 'merged' });
    expect(q.state.targetHead).toBe('main-3');
  });

  it('asks for a test branch named <prefix>/pr-<n>/<testRunId> holding base and PR heads in order', () => {
    const q = new Scenario({ settings: { testBranchPrefix: 'mq' } });
    q.submitAll(7, 8);
    const [first, second] = q.asked('create_test_run');
    expect(first).toMatchObject({
      testBranch: `mq/pr-7/${first?.runId}`,
      baseSha: 'main-0',
      prHeads: [{ number: 7, sha: 'pr7-v1' }],
      testedPrs: [7],
      requiredStatuses: [REQUIRED_CHECK],
      createDraftPr: true,
    });
    expect(second?.prHeads).toEqual([
      { number: 7, sha: 'pr7-v1' },
      { number: 8, sha: 'pr8-v1' },
    ]);
    expect(new Set([first?.runId, second?.runId]).size).toBe(2);
  });

  it('uses the default prefix mainline-merge', () => {
    const q = new Scenario();
    q.submit(4);
    expect(q.runOf(4).testBranch).toBe(`mainline-merge/pr-4/${q.runOf(4).id}`);
  });

  it('merges each PR as its own commit with the configured method and expected head', () => {
    const q = new Scenario({ settings: { mergeMethod: 'rebase' } });
    q.submitAll(1, 2);
    q.pass(1);
    q.pass(2);
    expect(q.asked('merge_pr')).toEqual([
      {
        type: 'merge_pr',
        prNumber: 1,
        method: 'rebase',
        expectedHeadSha: 'pr1-v1',
        expectedTargetSha: 'main-0',
        direct: false,
      },
      {
        type: 'merge_pr',
        prNumber: 2,
        method: 'rebase',
        expectedHeadSha: 'pr2-v1',
        expectedTargetSha: 'main-1',
        direct: false,
      },
    ]);
  });

  it('tests no more than `concurrency` PRs at once and starts the next when one finishes', () => {
    const q = new Scenario({ settings: { concurrency: 2 } });
    q.submitAll(1, 2, 3);
    expect(q.states(1, 2, 3)).toEqual({ 1: 'testing', 2: 'testing', 3: 'pending' });
    q.pass(1);
    expect(q.merged).toEqual([1]);
    expect(q.stateOf(3)).toBe('testing');
    // PR 1's slot was freed when it passed, before its merge landed: 3 is built on main-0 + 1 + 2.
    expect(q.contents(q.runOf(3))).toEqual({ base: 'main-0', ahead: [1, 2], tested: [3] });
    q.pass(2);
    q.pass(3);
    expect(q.merged).toEqual([1, 2, 3]);
  });

  it('waits for a PR to be mergeable on the forge before admitting it', () => {
    const q = new Scenario();
    q.submit(1, { mergeable: false });
    expect(q.stateOf(1)).toBe('not_ready');
    expect(q.asked('create_test_run')).toEqual([]);
    q.send({ type: 'pr_readiness_changed', prNumber: 1, mergeability: 'mergeable' });
    expect(q.stateOf(1)).toBe('testing');
  });

  it('freezes required statuses per run: merge_instance over config file over branch protection', () => {
    const q = new Scenario();
    q.send({ type: 'required_statuses_discovered', serviceConfig: ['lint', 'unit'] });
    q.submit(1);
    q.update({ requiredStatuses: ['e2e'] });
    q.submit(2);
    q.update({ deleteRequiredStatuses: true });
    q.send({ type: 'required_statuses_discovered', serviceConfig: null });
    q.submit(3);

    const details = (n: number) => getTestingDetails(q.state, q.runOf(n).id);
    expect(details(1)).toMatchObject({
      requiredStatuses: ['lint', 'unit'],
      requiredStatusesSource: 'service_config',
    });
    expect(details(2)).toMatchObject({ requiredStatuses: ['e2e'], requiredStatusesSource: 'merge_instance' });
    expect(details(3)).toMatchObject({
      requiredStatuses: [REQUIRED_CHECK],
      requiredStatusesSource: 'repo_provider_branch_protection',
    });
  });

  it('passes a run only when every required status passed', () => {
    const q = new Scenario();
    q.update({ requiredStatuses: ['lint', 'unit'] });
    q.submit(1);
    const run = q.runOf(1).id;
    q.report(run, 'passed', 'lint');
    q.report(run, 'passed', 'not-required');
    expect(q.stateOf(1)).toBe('testing');
    q.report(run, 'passed', 'unit');
    expect(q.merged).toEqual([1]);
  });

  it('exposes testing details for a run', () => {
    const q = new Scenario();
    q.submitAll(1, 2);
    const details = getTestingDetails(q.state, q.runOf(2).id);
    expect(details).toMatchObject({
      testBranchSha: `sha-${q.runOf(2).id}`,
      testedPullRequests: [{ prNumber: 2, title: 'PR 2' }],
      dependentPrs: [1],
      status: 'in_progress',
    });
    q.pass(1);
    q.pass(2);
    expect(getTestingDetails(q.state, details?.testRunId ?? '')?.status).toBe('succeeded');
    expect(getTestingDetails(q.state, 'nope')).toBeUndefined();
  });

  it('deletes the test branches once their PRs merged', () => {
    const q = new Scenario();
    q.submitAll(1, 2);
    const runs = [q.runOf(1).id, q.runOf(2).id];
    q.pass(1);
    expect(q.asked('delete_test_branch').map((a) => a.runId)).toEqual([runs[0]]);
    q.pass(2);
    expect(q.asked('delete_test_branch')).toEqual(
      runs.map((runId) => expect.objectContaining({ runId, cancelCi: false })),
    );
  });

  it('lists queued PRs in queue order, not_ready ones last', () => {
    const q = new Scenario({ settings: { concurrency: 1 } });
    q.submit(5, { mergeable: false });
    q.submitAll(1, 2);
    expect(listQueuedPrs(q.state).map((e) => [e.number, e.state])).toEqual([
      [1, 'testing'],
      [2, 'pending'],
      [5, 'not_ready'],
    ]);
  });

  it('reports each PR state change with its reason', () => {
    const q = new Scenario();
    q.submit(1);
    q.pass(1);
    const reports = q.asked('report_pr_state').map((a) => a.state);
    expect(reports).toEqual(['testing', 'tests_passed', 'merged']);
  });
});
