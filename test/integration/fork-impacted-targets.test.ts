// Fork pull requests' impacted targets (issue 23, finding 6). A fork's workflow run gets no secrets, so
// trunk-io/merge-action (src/scripts/upload_impacted_targets.sh, commit e6c008cee5ce879e2c2be8385cb1ddd28ea7ae69)
// and trunk-io/nx-action (src/upload_impacted_targets.py, commit e2e1ddb56c02f3e5614306fdeeffaedf9aed9080)
// send setImpactedTargets with `x-forked-workflow-run-id: <github.run_id>` and no usable token. Mainline
// accepts it for that one call only after GitHub confirmed the run: a run of the repository, from a
// fork's pull_request, in progress, recent, at the PR's current head.
import { afterEach, describe, expect, it } from 'vitest';
import { revokeOwner } from '../../src/app/forge-grants.ts';
import { GH_REPO, GitHubScenario } from '../support/github-scenario.ts';
import { impactedTargetRows } from '../support/reads.ts';

const { owner, name } = GH_REPO;
const FORK = 'contributor/widgets';
const HEADER = 'x-forked-workflow-run-id';

let s: GitHubScenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** A fork's PR, and a run of its workflow in progress at its head (started 10 minutes ago). */
async function forkPr(scenario: GitHubScenario) {
  const number = await scenario.sim.openPullRequest(owner, name, {
    head: 'fork-feature',
    title: 'Fix typo',
    author: 'contributor',
    files: { 'docs.txt': 'fixed\n' },
  });
  const sha = (await scenario.sim.pullRequest(owner, name, number)).head.sha;
  const runId = await scenario.sim.startWorkflowRun(owner, name, {
    headSha: sha,
    headRepository: FORK,
    headBranch: 'fork-feature',
    startedAt: scenario.clock - 10 * 60_000,
  });
  return { number, sha, runId };
}

/** merge-action's body (pr.number as a string), sent with the run id and no token. */
function upload(
  scenario: GitHubScenario,
  pr: { number: number; sha: string },
  runId: number | string,
  extra: Record<string, string> = {},
) {
  return scenario.t.post(
    '/v1/setImpactedTargets',
    {
      repo: GH_REPO,
      pr: { number: String(pr.number), sha: pr.sha },
      targetBranch: 'main',
      impactedTargets: ['//docs:all'],
    },
    undefined,
    { [HEADER]: String(runId), ...extra },
  );
}

function expectRefused(res: { statusCode: number; json(): unknown; body: string }, message: RegExp) {
  expect(res.statusCode, res.body).toBe(401);
  const error = (res.json() as { error: { code: string; message: string } }).error;
  expect(error.code).toBe('INVALID_TOKEN');
  expect(error.message).toMatch(message);
}

describe('setImpactedTargets from a fork pull request (x-forked-workflow-run-id)', () => {
  it.each(['token', 'app'] as const)(
    'accepts a run of the repository in progress at the PR head, verified through GitHub (%s auth)',
    async (auth) => {
      s = await GitHubScenario.create({}, { auth });
      const pr = await forkPr(s);
      const res = await upload(s, pr, pr.runId);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({});
      expect(await impactedTargetRows(s.t)).toEqual([
        { pr_number: pr.number, head_sha: pr.sha, targets: JSON.stringify(['//docs:all']) },
      ]);
      // GitHub was asked about the run and about the PR's head, at every call (nothing is cached).
      expect(s.sim.requestsTo('GET', `/repos/${owner}/${name}/actions/runs/${pr.runId}`)).toHaveLength(1);
      expect(s.sim.requestsTo('GET', `/repos/${owner}/${name}/pulls/${pr.number}`)).toHaveLength(1);
      expect((await upload(s, pr, pr.runId)).statusCode).toBe(200);
      expect(s.sim.requestsTo('GET', `/repos/${owner}/${name}/actions/runs/${pr.runId}`)).toHaveLength(2);
    },
  );

  it('refuses a run GitHub does not know in the repository: unknown, or a run of another repository', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    await s.sim.createRepo(owner, 'other');
    const elsewhere = await s.sim.startWorkflowRun(owner, 'other', { headSha: 'main', headRepository: FORK });
    expectRefused(await upload(s, pr, elsewhere), /GitHub has no Actions run \d+ in acme\/widgets/);
    expectRefused(await upload(s, pr, 987654321), /GitHub has no Actions run 987654321 in acme\/widgets/);
    expect(await impactedTargetRows(s.t)).toEqual([]);
  });

  it('refuses a run at another head than pr.sha, and a pr.sha that is no longer the PR head', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    // A run of the fork at main's commit cannot vouch for the PR head.
    const atMain = await s.sim.startWorkflowRun(owner, name, { headSha: 'main', headRepository: FORK });
    expectRefused(await upload(s, pr, atMain), /ran at [0-9a-f]{40}, not at the pull request head/);
    // The PR moved on: the old run, at the old head, matches its own claim but not the PR any more.
    const newHead = await s.sim.pushToPullRequest(owner, name, pr.number, { 'docs.txt': 'again\n' });
    expectRefused(
      await upload(s, pr, pr.runId),
      new RegExp(`pull request #${pr.number}'s head on GitHub is ${newHead}, not ${pr.sha}`),
    );
    expect(await impactedTargetRows(s.t)).toEqual([]);
  });

  it('refuses a push run, a run of the repository itself, a finished run and one started over 6 hours ago', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    const start = (opts: object) => s!.sim.startWorkflowRun(owner, name, { headSha: pr.sha, ...opts });
    const cases: [number, RegExp][] = [
      [await start({ event: 'push', headRepository: FORK }), /started by a "push" event/],
      [await start({}), /is not from a fork/],
      [await start({ headRepository: FORK, status: 'completed' }), /has completed/],
      [
        await start({ headRepository: FORK, startedAt: s.clock - 6 * 3_600_000 - 60_000 }),
        /started more than 6 hours ago/,
      ],
    ];
    for (const [runId, message] of cases) expectRefused(await upload(s, pr, runId), message);
    // The run that was fine becomes refused once it completes.
    s.sim.completeWorkflowRun(owner, name, pr.runId);
    expectRefused(await upload(s, pr, pr.runId), /has completed/);
    expect(await impactedTargetRows(s.t)).toEqual([]);
  });

  it('refuses when the queue knows the PR at another head', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    const submitted = await s.post('/v1/submitPullRequest', {
      repo: GH_REPO,
      targetBranch: 'main',
      pr: { number: pr.number },
    });
    expect(submitted.statusCode, submitted.body).toBe(200);
    // A run at a commit that GitHub's PR head never was, claimed for this PR.
    const other = await s.sim.commit(owner, name, 'elsewhere', { 'x.txt': 'x\n' });
    const runId = await s.sim.startWorkflowRun(owner, name, { headSha: other, headRepository: FORK });
    expectRefused(
      await upload(s, { number: pr.number, sha: other }, runId),
      new RegExp(`#${pr.number} is in the queue at head ${pr.sha}`),
    );
    expect(await impactedTargetRows(s.t)).toEqual([]);
  });

  it('GitHub refusing the server (no Actions: read) is a 503 saying so, and the same run works once allowed', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    s.sim.faults.fail('GET', `/repos/${owner}/${name}/actions/runs/${pr.runId}`, 403);
    const res = await upload(s, pr, pr.runId);
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json().error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.json().error.message).toMatch(/Actions: read/);
    expect(await impactedTargetRows(s.t)).toEqual([]);
    expect((await upload(s, pr, pr.runId)).statusCode).toBe(200);
  });

  it('refuses a repository whose owner is granted to no organization, without asking GitHub', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    await revokeOwner(s.t.db.database.db, { orgSlug: 'acme', host: 'github.com', owner });
    const before = s.sim.requests.length;
    const res = await upload(s, pr, pr.runId);
    expectRefused(res, /whose owner the operator granted to an organization, and that has a merge queue/);
    // The same answer as for a granted repository without a queue: nobody learns who uses the server.
    expect(s.sim.requests.length).toBe(before);
    expect(await impactedTargetRows(s.t)).toEqual([]);
  });

  it('refuses a repository with no queue for the branch, and a repository off the GitHub host', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    const noQueue = await s.t.post(
      '/v1/setImpactedTargets',
      {
        repo: GH_REPO,
        pr: { number: pr.number, sha: pr.sha },
        targetBranch: 'release',
        impactedTargets: 'ALL',
      },
      undefined,
      { [HEADER]: String(pr.runId) },
    );
    expectRefused(noQueue, /has a merge queue for "release"/);
    const gitlab = await s.t.post(
      '/v1/setImpactedTargets',
      {
        repo: { ...GH_REPO, host: 'gitlab.com' },
        pr: { number: pr.number, sha: pr.sha },
        targetBranch: 'main',
        impactedTargets: 'ALL',
      },
      undefined,
      { [HEADER]: String(pr.runId) },
    );
    expectRefused(gitlab, /only for a repository on github\.com/);
    expect(await impactedTargetRows(s.t)).toEqual([]);
  });

  it('the run id stands in for a token on setImpactedTargets only: every other endpoint answers 401', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    const ref = { repo: GH_REPO, targetBranch: 'main' };
    const attempts = [
      ['/v1/getQueue', ref],
      ['/v1/submitPullRequest', { ...ref, pr: { number: pr.number } }],
      ['/v1/cancelPullRequest', { ...ref, pr: { number: pr.number } }],
      ['/v1/updateQueue', { ...ref, state: 'paused' }],
      ['/v1/metrics/createBundleUpload', { repo: GH_REPO, orgUrlSlug: 'acme' }],
    ] as const;
    for (const [url, body] of attempts) {
      const res = await s.t.post(url, body, undefined, { [HEADER]: String(pr.runId) });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(401);
      expect(res.json().error.code).toBe('AUTHENTICATION_REQUIRED');
      expect(res.json().error.message).toContain(`${HEADER} is accepted instead only by setImpactedTargets`);
    }
    // Nothing was asked of GitHub for them, and the queue is as it was.
    expect(s.sim.requestsTo('GET', /\/actions\/runs\//)).toHaveLength(0);
    const queue = await s.post('/v1/getQueue', ref);
    expect(queue.json().state).toBe('running');
  });

  it('a token, when sent, decides: an invalid one is refused even with a good run id; empty ones are absent', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    const bad = await upload(s, pr, pr.runId, { 'x-api-token': 'ml_not-a-token' });
    expect(bad.statusCode, bad.body).toBe(401);
    expect(bad.json().error.message).not.toContain(HEADER);
    expect(s.sim.requestsTo('GET', /\/actions\/runs\//)).toHaveLength(0);
    // nx-action sends `x-api-token: ""` from a fork: that is no token, and the run is verified.
    expect((await upload(s, pr, pr.runId, { 'x-api-token': '' })).statusCode).toBe(200);
    // merge-action sends the run id with its token too: the token path takes it, GitHub is not asked.
    const before = s.sim.requestsTo('GET', /\/actions\/runs\//).length;
    expect((await upload(s, pr, pr.runId, { 'x-api-token': s.token })).statusCode).toBe(200);
    expect(s.sim.requestsTo('GET', /\/actions\/runs\//)).toHaveLength(before);
  });

  it('refused run ids count as failed authentications: past the budget 429, and GitHub is not asked', async () => {
    s = await GitHubScenario.create(
      {},
      { env: { MAINLINE_AUTH_FAIL_LIMIT: '6', MAINLINE_AUTH_FAIL_BURST: '3' } },
    );
    const pr = await forkPr(s);
    for (const runId of [1001, 1002, 1003])
      expectRefused(await upload(s, pr, runId), /GitHub has no Actions run/);
    const asked = s.sim.requestsTo('GET', /\/actions\/runs\//).length;
    expect(asked).toBe(3);
    const limited = await upload(s, pr, 1004);
    expect(limited.statusCode, limited.body).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(limited.headers['retry-after']).toBeDefined();
    expect(s.sim.requestsTo('GET', /\/actions\/runs\//)).toHaveLength(asked);
  });

  it('a run id that is not a number is refused before GitHub is asked', async () => {
    s = await GitHubScenario.create();
    const pr = await forkPr(s);
    for (const value of ['abc', '12; rm -rf', '-5', '0', '99999999999999999999']) {
      const res = await upload(s, pr, value);
      expectRefused(res, /must be the id of a GitHub Actions run/);
    }
    expect(s.sim.requestsTo('GET', /\/actions\/runs\//)).toHaveLength(0);
  });
});
