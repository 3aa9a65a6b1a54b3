/**
 * The queue's GitHub label settings (docs/github.md, Labels), through the GitHub simulator over HTTP:
 * the enqueueing label submits a PR when a writer applies it (and only then), label commands make its
 * removal cancel, and state labels show where a queued PR stands. The settings are the ones
 * terraform-provider-trunk sends (enqueueingLabel, labelCommandsEnabled, stateLabelsEnabled).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { COMMENT_MARKER } from '../../src/forge/github/index.ts';
import { GH_REPO, GitHubScenario } from '../support/github-scenario.ts';
import { forgeDeliveryRows } from '../support/reads.ts';

const { owner, name } = GH_REPO;
const LABEL = 'ready-to-merge';

describe('GitHub labels drive and show the merge queue', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const openPr = async (head: string) => {
    const n = await s!.sim.openPullRequest(owner, name, {
      head,
      title: `Change ${head}`,
      author: 'octocat',
      files: { [`${head}.txt`]: `${head}\n` },
    });
    return n;
  };
  const statusComment = (n: number) =>
    s!.sim.comments(owner, name, n).find((c) => c.body.includes(COMMENT_MARKER))?.body;
  const stateLabels = (n: number) => s!.sim.labels(owner, name, n).filter((l) => l.startsWith('mainline:'));

  it.each(['token', 'app'] as const)(
    'a writer applying the enqueueing label submits the PR, which loses the label; its state label follows it to merged (%s auth)',
    async (auth) => {
      s = await GitHubScenario.create(
        { directMergeMode: 'off', enqueueingLabel: LABEL, stateLabelsEnabled: true },
        { auth },
      );
      const n = await openPr('feature');
      await s.sim.addLabel(owner, name, n, LABEL, 'octocat');
      await s.settle();
      expect((await s.pr(n)).state).toBe('not_ready');
      // Picked up: the queue takes the enqueueing label off (Trunk does too) and shows the PR queued.
      expect(s.sim.labels(owner, name, n)).toEqual(['mainline:queued']);

      await s.headGreen(n);
      await s.settle();
      expect((await s.pr(n)).state).toBe('testing');
      expect(stateLabels(n)).toEqual(['mainline:testing']);

      const run = (await s.runsInProgress())[0]!;
      await s.sim.completeCheck(owner, name, run.sha, { name: 'ci', conclusion: 'success' });
      await s.settle();
      expect((await s.sim.pullRequest(owner, name, n)).merged).toBe(true);
      expect(stateLabels(n)).toEqual(['mainline:merged']);
      // The queue's own label changes came back as webhooks, and none of them moved the queue.
      const outcomes = await forgeDeliveryRows(s.t);
      expect(outcomes.map((o) => o.outcome).filter((o) => o?.includes('submitted'))).toHaveLength(1);
    },
  );

  it('a label from someone without write access submits nothing; the label stays and the PR is told why', async () => {
    s = await GitHubScenario.create({
      directMergeMode: 'off',
      enqueueingLabel: LABEL,
      stateLabelsEnabled: true,
    });
    s.sim.setPermission(owner, name, 'triager', 'triage');
    const n = await openPr('feature');
    await s.headGreen(n);
    await s.sim.addLabel(owner, name, n, LABEL, 'triager');
    await s.settle();
    expect((await s.pr(n)).error?.code).toBe('PR_NOT_FOUND');
    expect(await s.runsInProgress()).toEqual([]);
    expect(s.sim.labels(owner, name, n)).toEqual([LABEL]);
    expect(statusComment(n)).toMatch(/@triager has triage access to acme\/widgets/);

    // A bot (an automation's token without write access) is refused the same way.
    const m = await openPr('other');
    await s.sim.addLabel(owner, name, m, LABEL, 'renovate[bot]');
    await s.settle();
    expect((await s.pr(m)).error?.code).toBe('PR_NOT_FOUND');

    // The same label applied again by a writer (removed and re-added) queues the first PR.
    await s.sim.removeLabel(owner, name, n, LABEL, 'octocat');
    await s.sim.addLabel(owner, name, n, LABEL, 'octocat');
    await s.settle();
    expect((await s.pr(n)).state).toBe('testing');
  });

  it('with label commands the label stays while the PR is queued, and a writer removing it cancels the PR', async () => {
    s = await GitHubScenario.create({
      directMergeMode: 'off',
      enqueueingLabel: LABEL,
      labelCommandsEnabled: true,
      stateLabelsEnabled: true,
    });
    s.sim.setPermission(owner, name, 'reader', 'read');
    const n = await openPr('feature');
    await s.headGreen(n);
    await s.sim.addLabel(owner, name, n, 'Ready-To-Merge', 'octocat');
    await s.settle();
    expect((await s.pr(n)).state).toBe('testing');
    expect(s.sim.labels(owner, name, n)).toEqual(['Ready-To-Merge', 'mainline:testing']);

    // Someone without write access taking the label off changes nothing in the queue.
    await s.sim.removeLabel(owner, name, n, 'Ready-To-Merge', 'reader');
    await s.settle();
    expect((await s.pr(n)).state).toBe('testing');
    expect(statusComment(n)).toMatch(/Removing the label "Ready-To-Merge" did not change the queue: @reader/);

    await s.sim.addLabel(owner, name, n, LABEL, 'octocat');
    await s.settle();
    await s.sim.removeLabel(owner, name, n, LABEL, 'octocat');
    await s.settle();
    expect((await s.pr(n)).state).toBe('cancelled');
    // A cancelled PR carries no state label.
    expect(s.sim.labels(owner, name, n)).toEqual([]);
    expect(await s.runsInProgress()).toEqual([]);
  });

  it('with the settings off (a new queue), labels neither submit nor appear', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const queue = (await s.post('/v1/getQueue', { repo: GH_REPO, targetBranch: 'main' })).json();
    expect(queue).toMatchObject({
      enqueueingLabel: '',
      labelCommandsEnabled: false,
      stateLabelsEnabled: false,
    });
    const n = await openPr('feature');
    await s.headGreen(n);
    await s.sim.addLabel(owner, name, n, LABEL, 'octocat');
    await s.settle();
    expect((await s.pr(n)).error?.code).toBe('PR_NOT_FOUND');

    // Queued by a command instead: it merges without the queue ever labelling it.
    await s.sim.comment(owner, name, n, '/mainline merge', 'octocat');
    await s.settle();
    const run = (await s.runsInProgress())[0]!;
    await s.sim.completeCheck(owner, name, run.sha, { name: 'ci', conclusion: 'success' });
    await s.settle();
    expect((await s.sim.pullRequest(owner, name, n)).merged).toBe(true);
    expect(s.sim.labels(owner, name, n)).toEqual([LABEL]);
    expect(s.sim.requestsTo('POST', /\/labels$/)).toEqual([]);
    expect(s.sim.requestsTo('GET', /\/labels$/)).toEqual([]);
  });
});
