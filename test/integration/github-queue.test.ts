import { afterEach, describe, expect, it } from 'vitest';
import { COMMENT_MARKER, STATUS_CONTEXT } from '../../src/forge/github/index.ts';
import { GH_REPO, GitHubScenario, SECRET } from '../support/github-scenario.ts';
import { signWebhook } from '../support/github-sim/index.ts';
import { storedQueueState } from '../support/queue-rows.ts';
import { forgeDeliveryRows } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';

const { owner, name } = GH_REPO;

describe('the merge queue on GitHub (simulated over HTTP, real git behind it)', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it.each(['token', 'app'] as const)(
    '/mainline merge → queued → test branch → check run → merged on GitHub, with the comment and status kept current (%s auth)',
    async (auth) => {
      s = await GitHubScenario.create({ directMergeMode: 'off' }, { auth });
      const n = s.sim.openPullRequest(owner, name, {
        head: 'feature',
        title: 'Add feature',
        author: 'octocat',
        files: { 'feature.txt': 'new\n' },
      });
      const number = await n;
      const head = (await s.sim.pullRequest(owner, name, number)).head.sha;
      await s.sim.comment(owner, name, number, 'Looks good.\n/mainline merge', 'octocat');
      await s.deliver();
      await s.settle();
      // Not queued until the required check passed on the PR's own head; the check_run webhook tells it.
      const waiting = await s.pr(number);
      expect(waiting.state).toBe('not_ready');
      expect(waiting.stateReason).toBe(
        `waiting for required checks to pass on its head ${head.slice(0, 12)}: ci`,
      );
      expect(await s.runsInProgress()).toEqual([]);
      await s.headGreen(number);
      await s.settle();

      const runs = await s.runsInProgress();
      expect(runs).toHaveLength(1);
      const run = runs[0]!;
      expect(await s.sim.head(owner, name, run.branch)).toBe(run.sha);
      expect(await s.sim.fileAt(owner, name, run.sha, 'feature.txt')).toBe('new\n');
      // createPrsForTestingBranches (on by default): a draft PR for the test branch.
      const drafts = s.sim.requestsTo('POST', `/repos/${owner}/${name}/pulls`);
      expect(drafts).toHaveLength(1);
      expect((await s.pr(number)).state).toBe('testing');
      const testing = s.sim.comments(owner, name, number).filter((c) => c.body.includes(COMMENT_MARKER));
      expect(testing).toHaveLength(1);
      expect(testing[0]!.body).toMatch(/Testing/);
      expect(s.sim.statuses(owner, name, head).find((x) => x.context === STATUS_CONTEXT)?.state).toBe(
        'pending',
      );

      await s.sim.completeCheck(owner, name, run.sha, { name: 'ci', conclusion: 'success' });
      await s.settle();

      const merged = await s.sim.pullRequest(owner, name, number);
      expect(merged.merged).toBe(true);
      expect(await s.sim.fileAt(owner, name, 'main', 'feature.txt')).toBe('new\n');
      expect((await s.pr(number)).state).toBe('merged');
      const comments = s.sim.comments(owner, name, number).filter((c) => c.body.includes(COMMENT_MARKER));
      expect(comments).toHaveLength(1);
      expect(comments[0]!.body).toMatch(/Merged/);
      expect(
        s.sim
          .statuses(owner, name, head)
          .filter((x) => x.context === STATUS_CONTEXT)
          .at(-1)?.state,
      ).toBe('success');
      // The test branch and its draft PR are gone once the run ended.
      expect(await s.sim.head(owner, name, run.branch)).toBeNull();
      const draftNumber = drafts[0]!.status === 201 ? number + 1 : -1;
      expect((await s.sim.pullRequest(owner, name, draftNumber)).state).toBe('closed');
    },
  );

  it('a badly signed or unsigned delivery is refused and changes nothing; a replayed delivery is ignored', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const number = await s.openGreenPr({
      head: 'feature',
      title: 'Add feature',
      files: { 'feature.txt': 'new\n' },
    });
    await s.deliver();
    const before = await s.deliveriesStored();
    const payload = {
      action: 'created',
      repository: { name, owner: { login: owner }, full_name: `${owner}/${name}` },
      issue: { number, pull_request: { url: 'x' } },
      comment: { id: 1, body: '/mainline merge', user: { login: 'mallory' } },
    };
    const body = JSON.stringify(payload);
    const forged = await s.sim.sendRaw('issue_comment', body, {
      signature: signWebhook('wrong-secret', body),
    });
    expect(forged.status).toBe(401);
    const unsigned = await s.sim.sendRaw('issue_comment', body, { signature: '' });
    expect(unsigned.status).toBe(401);
    expect(await s.deliveriesStored()).toBe(before);
    await s.settle();
    expect((await s.pr(number)).error?.code).toBe('PR_NOT_FOUND');

    // A genuine command, then GitHub redelivers it: stored once, processed once.
    await s.sim.comment(owner, name, number, '/mainline merge', 'octocat');
    const original = s.sim.deliveries.filter((d) => d.event === 'issue_comment').at(-1)!;
    expect(original.status).toBe(202);
    await s.settle();
    expect((await s.pr(number)).state).toBe('testing');
    const stored = await s.deliveriesStored();
    const again = await s.sim.redeliver(original.id);
    expect(again.status).toBe(202);
    expect(await s.deliveriesStored()).toBe(stored);
    const row = (await forgeDeliveryRows(s.t)).find((d) => d.id === original.id);
    if (row === undefined) throw new Error('the delivery was not recorded');
    expect(row.attempts).toBe(1);
    expect(row.outcome).toMatch(/mainline merge on #/);
    // The same body signed with the configured secret is accepted and stored.
    const signed = await s.sim.sendRaw('issue_comment', body, { signature: signWebhook(SECRET, body) });
    expect(signed.status).toBe(202);
    expect(await s.deliveriesStored()).toBe(stored + 1);
  });

  it('new commits on a queued PR restart its tests; closing it or /mainline cancel takes it out', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const one = await s.openGreenPr({
      head: 'one',
      title: 'One',
      files: { '1.txt': '1\n' },
    });
    const two = await s.openGreenPr({
      head: 'two',
      title: 'Two',
      files: { '2.txt': '2\n' },
    });
    const three = await s.openGreenPr({
      head: 'three',
      title: 'Three',
      files: { '3.txt': '3\n' },
    });
    for (const n of [one, two, three]) await s.sim.comment(owner, name, n, '/mainline merge', 'octocat');
    await s.settle();
    expect((await s.pr(one)).state).toBe('testing');

    const newHead = await s.sim.pushToPullRequest(owner, name, one, { '1.txt': 'one\n' });
    await s.settle();
    const record = await s.pr(one);
    expect(record.headSha ?? record.pr?.sha ?? JSON.stringify(record)).toContain(newHead);

    await s.sim.closePullRequest(owner, name, two);
    await s.sim.comment(owner, name, three, '/mainline cancel', 'octocat');
    await s.settle();
    expect((await s.pr(two)).state).toBe('cancelled');
    expect((await s.pr(three)).state).toBe('cancelled');
  });

  it('rate limits and transient GitHub failures delay actions but never lose or repeat them', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const number = await s.openGreenPr();
    // The first comment post fails (5xx), the first test-branch merge hits a secondary rate limit.
    s.sim.faults.fail('POST', `/repos/${owner}/${name}/issues/*/comments`, 502);
    s.sim.faults.inject({
      method: 'POST',
      path: `/repos/${owner}/${name}/merges`,
      response: { kind: 'secondary-rate-limit', retryAfterSeconds: 1 },
    });
    await s.sim.comment(owner, name, number, '/mainline merge', 'octocat');
    await s.settle();
    await s.settle();
    const run = (await s.runsInProgress())[0]!;
    await s.sim.completeCheck(owner, name, run.sha, { name: 'ci', conclusion: 'success' });
    // The PR merge: primary rate limit once, then a 500 once.
    s.sim.faults.inject({
      method: 'PUT',
      path: `/repos/${owner}/${name}/pulls/*/merge`,
      response: { kind: 'primary-rate-limit', resetInSeconds: 1 },
    });
    s.sim.faults.fail('PUT', `/repos/${owner}/${name}/pulls/*/merge`, 500);
    await s.settle();
    await s.settle();
    expect((await s.sim.pullRequest(owner, name, number)).merged).toBe(true);
    expect((await s.pr(number)).state).toBe('merged');
    const merges = s.sim.requestsTo('PUT', `/repos/${owner}/${name}/pulls/${number}/merge`);
    expect(merges.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await s.sim.log(owner, name, 'main')).toHaveLength(2);
    const marked = s.sim.comments(owner, name, number).filter((c) => c.body.includes(COMMENT_MARKER));
    expect(marked).toHaveLength(1);
    expect(s.sim.faults.pending).toBe(0);
  });

  it('a push to the target branch from outside the queue rebuilds the test branch on the new head', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const number = await s.openGreenPr();
    await s.sim.comment(owner, name, number, '/mainline merge', 'octocat');
    await s.settle();
    const before = (await s.runsInProgress())[0]!;
    const pushed = await s.sim.commit(owner, name, 'main', { 'hotfix.txt': 'urgent\n' }, 'Hotfix');
    await s.settle();
    const after = (await s.runsInProgress())[0]!;
    expect(after.id).not.toBe(before.id);
    expect(await s.sim.fileAt(owner, name, after.sha, 'hotfix.txt')).toBe('urgent\n');
    expect(await s.sim.fileAt(owner, name, after.sha, 'f.txt')).toBe('f\n');
    expect((await storedQueueState(s.t.db.database.db)).targetHead).toBe(pushed);
  });

  it('a push to the target after the run passed but before the merge: the PR is tested again, not merged onto it', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off' });
    const number = await s.openGreenPr();
    await s.sim.comment(owner, name, number, '/mainline merge', 'octocat');
    await s.settle();
    const first = (await s.runsInProgress())[0]!;
    // CI passes and the queue decides to merge; before the runner carries the merge out, someone pushes.
    await s.sim.completeCheck(owner, name, first.sha, { name: 'ci', conclusion: 'success' });
    await s.deliver();
    const pushed = await s.sim.commit(owner, name, 'main', { 'hotfix.txt': 'urgent\n' }, 'Hotfix');
    await s.settle();

    expect((await s.sim.pullRequest(owner, name, number)).merged).toBe(false);
    expect(await s.sim.head(owner, name, 'main')).toBe(pushed);
    const retest = (await s.runsInProgress())[0]!;
    expect(retest.id).not.toBe(first.id);
    expect(await s.sim.fileAt(owner, name, retest.sha, 'hotfix.txt')).toBe('urgent\n');
    const pr = await s.pr(number);
    expect(pr.state, pr.stateReason).toBe('testing');

    await s.sim.completeCheck(owner, name, retest.sha, { name: 'ci', conclusion: 'success' });
    await s.settle();
    expect((await s.sim.pullRequest(owner, name, number)).merged).toBe(true);
    expect(await s.sim.fileAt(owner, name, 'main', 'hotfix.txt')).toBe('urgent\n');
    expect(await s.sim.fileAt(owner, name, 'main', 'f.txt')).toBe('f\n');
    expect((await s.pr(number)).state).toBe('merged');
  });

  it('commands are ignored when the queue turns them off', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off', commandsEnabled: false });
    const number = await s.openGreenPr();
    await s.sim.comment(owner, name, number, '/mainline merge', 'octocat');
    await s.settle();
    expect((await s.pr(number)).error?.code).toBe('PR_NOT_FOUND');
  });
});

describe('flake protection on GitHub', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a PR whose run failed only on a quarantined test merges, and its comment says which test and why', async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off', flakeProtection: 'ignore_quarantined' });
    const t = s.t;
    // test_flaky failed then passed on one commit of main: FLAKY, auto-quarantined.
    for (const fail of ['timeout', false] as const) {
      const res = await upload(
        t,
        s.token,
        [{ name: 'r.xml', content: junitXml([{ name: 'test_flaky', fail }, { name: 'test_ok' }]) }],
        { sha: 'f1a4e00', repo: GH_REPO },
      );
      expect(res.statusCode, res.body).toBe(200);
    }
    const number = await s.openGreenPr();
    await s.sim.comment(owner, name, number, '/mainline merge', 'octocat');
    await s.settle();
    const run = (await s.runsInProgress())[0]!;
    const ci = await upload(
      t,
      s.token,
      [
        {
          name: 'ci.xml',
          content: junitXml([{ name: 'test_flaky', fail: 'AssertionError' }, { name: 'test_ok' }]),
        },
      ],
      { sha: run.sha, branch: 'ci-checkout', repo: GH_REPO },
    );
    expect(ci.statusCode, ci.body).toBe(200);
    await s.sim.completeCheck(owner, name, run.sha, { name: 'ci', conclusion: 'failure' });
    await s.settle();

    expect((await s.sim.pullRequest(owner, name, number)).merged).toBe(true);
    const comment = s.sim.comments(owner, name, number).find((c) => c.body.includes(COMMENT_MARKER));
    expect(comment?.body).toMatch(/Merged/);
    expect(comment?.body).toMatch(/Flake protection/);
    expect(comment?.body).toMatch(/only quarantined tests failed/);
    expect(comment?.body).toMatch(/`test_flaky` \(quarantined\)/);
  });
});
