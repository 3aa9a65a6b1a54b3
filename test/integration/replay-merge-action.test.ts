/**
 * Replay of trunk-io/merge-action, read at commit e6c008cee5ce879e2c2be8385cb1ddd28ea7ae69 (action.yaml,
 * src/scripts/upload_impacted_targets.sh, tests/upload.test.ts). Written from what its upload step sends,
 * not from its code:
 *
 * - the step runs the script with bash and the env action.yaml gives it: ACTOR (github.actor), API_TOKEN
 *   (the trunk-token input: empty in a fork's run, which gets no secrets), REPOSITORY (owner/name), RUN_ID
 *   (github.run_id), IS_FORK (github.event.pull_request.head.repo.fork), TARGET_BRANCH, PR_NUMBER,
 *   PR_BRANCH_HEAD_SHA, IMPACTED_TARGETS_FILE (one target per line), IMPACTS_ALL_DETECTED; API_URL (the
 *   whole endpoint URL, default https://api.trunk.io:443/v1/setImpactedTargets) comes from the job's env;
 * - it builds the body with `jq` (pretty-printed, 2-space indent): `{"repo": {"host": "github.com", "owner",
 *   "name"}, "pr": {"number": <string>, "sha"}, "targetBranch", "impactedTargets": [lines, empty ones
 *   dropped] | "ALL"}`, and posts it with `curl -s -X POST -H "Content-Type: application/json"
 *   -H "x-api-token:${API_TOKEN}" -H "x-forked-workflow-run-id:${RUN_ID}" -d @file`: curl's -d drops the
 *   file's newlines, and a header given with nothing after the colon is not sent at all, so a fork's run
 *   sends no x-api-token; the run id is sent on every run, next to the token too;
 * - its answer: only status 200 is success (exit 0); anything else exits 1 and prints the body; 401 gets a
 *   message about the token for bots. (Checked once by running the script itself with bash 5, curl 7.88.1
 *   and jq 1.6 against this server: the requests below are the bytes it sent.)
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GH_REPO, GitHubScenario } from '../support/github-scenario.ts';
import { submitPr, testingDetails } from '../support/queue-api.ts';
import { type RawResponse, rawRequest } from '../support/raw-http.ts';
import { impactedTargetRows } from '../support/reads.ts';

const { owner, name } = GH_REPO;

/** The env action.yaml gives the upload step (the run's part of it). */
interface StepEnv {
  API_TOKEN: string;
  RUN_ID: string;
  IS_FORK: 'true' | 'false';
  PR_NUMBER: string;
  PR_BRANCH_HEAD_SHA: string;
  /** The impacted-targets file's content (one target per line). */
  targetsFile: string;
  IMPACTS_ALL_DETECTED: 'true' | 'false';
}

/** The body file jq writes (pretty, 2-space indent), as curl -d sends it: without its newlines. */
function jqBody(env: StepEnv): string {
  const targets =
    env.IMPACTS_ALL_DETECTED === 'true'
      ? 'ALL'
      : env.targetsFile.split('\n').filter((line) => line.length > 0);
  const body = {
    repo: { host: 'github.com', owner, name },
    pr: { number: env.PR_NUMBER, sha: env.PR_BRANCH_HEAD_SHA },
    targetBranch: 'main',
    impactedTargets: targets,
  };
  return JSON.stringify(body, null, 2).replace(/\n/g, '');
}

/** The request curl 7.88.1 makes for the step, byte for byte, and the one answer it reads. */
function step(port: number, env: StepEnv): Promise<RawResponse> {
  const body = jqBody(env);
  const headers = [
    'POST /v1/setImpactedTargets HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    'User-Agent: curl/7.88.1',
    'Accept: */*',
    'Content-Type: application/json',
    // `-H "x-api-token:"` (an empty token) makes curl leave the header out.
    ...(env.API_TOKEN === '' ? [] : [`x-api-token:${env.API_TOKEN}`]),
    ...(env.RUN_ID === '' ? [] : [`x-forked-workflow-run-id:${env.RUN_ID}`]),
    `Content-Length: ${Buffer.byteLength(body)}`,
    // The script's curl keeps the connection open; close it so the one answer is read to its end.
    'Connection: close',
  ];
  return rawRequest(port, `${headers.join('\r\n')}\r\n\r\n${body}`);
}

/** What the script makes of the answer: its exit code and, on failure, the body it prints. */
function scriptOutcome(res: RawResponse): { exit: number; printed: string | null } {
  return res.status === 200 ? { exit: 0, printed: null } : { exit: 1, printed: res.body };
}

let s: GitHubScenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

async function openPr(scenario: GitHubScenario, head: string) {
  const number = await scenario.sim.openPullRequest(owner, name, {
    head,
    title: `Change ${head}`,
    files: { [`${head}.txt`]: `${head}\n` },
  });
  return { number, sha: (await scenario.sim.pullRequest(owner, name, number)).head.sha };
}

/** A PR (head `head`) and the id of a workflow run on it from a fork, begun five minutes ago. */
async function forkPrWithRun(scenario: GitHubScenario, head: string) {
  const pr = await openPr(scenario, head);
  const runId = await scenario.sim.startWorkflowRun(owner, name, {
    headSha: pr.sha,
    headRepository: 'contributor/widgets',
    startedAt: scenario.clock - 5 * 60_000,
  });
  return { pr, runId };
}

/** The step's env on a fork's run: no token, the run id in its place. */
function forkStep(
  pr: { number: number; sha: string },
  runId: number,
  targets: Pick<StepEnv, 'targetsFile' | 'IMPACTS_ALL_DETECTED'>,
): StepEnv {
  return {
    API_TOKEN: '',
    RUN_ID: String(runId),
    IS_FORK: 'true',
    PR_NUMBER: String(pr.number),
    PR_BRANCH_HEAD_SHA: pr.sha,
    ...targets,
  };
}

const portOf = (scenario: GitHubScenario) => (scenario.t.app.server.address() as AddressInfo).port;

describe('replay: trunk-io/merge-action upload_impacted_targets.sh', () => {
  it('a PR of the repository: the token path, a list (empty lines dropped), "ALL" and an empty file', async () => {
    s = await GitHubScenario.create();
    const port = portOf(s);
    const [one, two, three] = [await openPr(s, 'one'), await openPr(s, 'two'), await openPr(s, 'three')];
    const base = { API_TOKEN: s.token, RUN_ID: '8812345678', IS_FORK: 'false' } as const;
    const sent: [typeof one, string, 'true' | 'false'][] = [
      [one, '//app:server\n\n//lib:util\n', 'false'],
      [two, '', 'true'],
      [three, '', 'false'],
    ];
    for (const [pr, targetsFile, all] of sent) {
      const res = await step(port, {
        ...base,
        PR_NUMBER: String(pr.number),
        PR_BRANCH_HEAD_SHA: pr.sha,
        targetsFile,
        IMPACTS_ALL_DETECTED: all,
      });
      expect(scriptOutcome(res), res.body).toEqual({ exit: 0, printed: null });
    }
    expect(await impactedTargetRows(s.t)).toEqual([
      { pr_number: one.number, head_sha: one.sha, targets: JSON.stringify(['//app:server', '//lib:util']) },
      { pr_number: two.number, head_sha: two.sha, targets: JSON.stringify('ALL') },
      { pr_number: three.number, head_sha: three.sha, targets: JSON.stringify([]) },
    ]);
    // The run id next to the token changed nothing: GitHub was not asked about any run.
    expect(s.sim.requestsTo('GET', /\/actions\/runs\//)).toHaveLength(0);
  });

  it("a fork's PR: no token, the run id verified through GitHub; the PR then takes its targets in the queue", async () => {
    s = await GitHubScenario.create({ directMergeMode: 'off', mode: 'parallel' });
    const { pr, runId } = await forkPrWithRun(s, 'fork-fix');
    const res = await step(
      portOf(s),
      forkStep(pr, runId, { targetsFile: '//docs:site\n', IMPACTS_ALL_DETECTED: 'false' }),
    );
    expect(scriptOutcome(res), res.body).toEqual({ exit: 0, printed: null });
    expect(s.sim.requestsTo('GET', `/repos/${owner}/${name}/actions/runs/${runId}`)).toHaveLength(1);
    // A maintainer queues the PR; its run tests it with the targets the fork's run uploaded.
    await submitPr(s, GH_REPO, pr.number);
    await s.headGreen(pr.number);
    await s.settle();
    const [run] = await s.runsInProgress();
    expect(run?.tested).toEqual([pr.number]);
    expect(await testingDetails(s, GH_REPO, run!.id)).toMatchObject({
      impactedTargetsForTestedPrs: ['//docs:site'],
    });
  });

  it("a fork's run GitHub cannot vouch for: 401, and the script prints the message saying why", async () => {
    s = await GitHubScenario.create();
    const { pr, runId } = await forkPrWithRun(s, 'fork-late');
    s.sim.completeWorkflowRun(owner, name, runId);
    const res = await step(portOf(s), forkStep(pr, runId, { targetsFile: '', IMPACTS_ALL_DETECTED: 'true' }));
    expect(res.status).toBe(401);
    const outcome = scriptOutcome(res);
    expect(outcome.exit).toBe(1);
    expect(JSON.parse(outcome.printed ?? '{}')).toMatchObject({
      error: { code: 'INVALID_TOKEN', message: expect.stringMatching(/run \d+ has completed/) },
    });
    expect(await impactedTargetRows(s.t)).toEqual([]);
  });
});
