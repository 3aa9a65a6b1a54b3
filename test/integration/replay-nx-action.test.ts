/**
 * Replay of trunk-io/nx-action, read at commit e2e1ddb56c02f3e5614306fdeeffaedf9aed9080 (action.yaml,
 * src/prerequisites.py, src/compute_impacted_targets.py, src/upload_impacted_targets.py). Written from
 * what it sends, not from its code:
 *
 * - compute: `nx graph --affected --base=<target head> --head=<PR head> --file=<json>`; the impacted targets
 *   are that file's `affectedProjects` (Nx project names, possibly npm-scoped like `@acme/ui`), possibly none;
 * - when a file matched by its impact-all filters changed, the targets are the string "IMPACTS_ALL";
 * - upload: Python `requests.post(API_URL, data=json.dumps(body), headers=…, timeout=30)` where API_URL
 *   defaults to https://api.trunk.io:443/v1/setImpactedTargets, the body is
 *   `{"repo": {"host": "github.com", "owner", "name"}, "pr": {"number": <string, from the env>, "sha"},
 *   "targetBranch", "impactedTargets"}` in json.dumps' spacing, and the headers are Content-Type
 *   application/json, `x-api-token` (the input, "" when absent) and `x-forked-workflow-run-id` (github.run_id,
 *   which every run has, so it comes next to the token on a same-repository PR too);
 * - its answer: only status 200 is success (the body is not read); 401 gets a message about the token;
 *   anything else exits 1 printing the body.
 *
 * The action runs on the pull_request event, so targets usually arrive before the PR is submitted.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GH_REPO, GitHubScenario } from '../support/github-scenario.ts';
import { type HttpAnswer, sendRequest } from '../support/http-answer.ts';
import { submitPr, testingDetails } from '../support/queue-api.ts';

const { owner, name } = GH_REPO;

/** Python's json.dumps with its defaults: ", " and ": " separators, non-ASCII escaped. */
function pythonJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const items = Object.entries(value).map(([k, v]) => `${pythonJsonDumps(k)}: ${pythonJsonDumps(v)}`);
    return `{${items.join(', ')}}`;
  }
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The upload step, as the action's environment drives it. */
interface NxUpload {
  apiToken: string;
  runId: string;
  prNumber: number;
  prHeadSha: string;
  targetBranch: string;
  impactedTargets: string[] | 'IMPACTS_ALL';
}

/** POSTs what upload_impacted_targets.py sends, with the headers python-requests 2.31 adds, over a real socket. */
function nxActionUpload(port: number, u: NxUpload): Promise<HttpAnswer> {
  const body = pythonJsonDumps({
    repo: { host: 'github.com', owner, name },
    pr: { number: String(u.prNumber), sha: u.prHeadSha },
    targetBranch: u.targetBranch,
    impactedTargets: u.impactedTargets,
  });
  return sendRequest(
    {
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/setImpactedTargets',
      agent: false,
      timeout: 30_000,
      headers: {
        'User-Agent': 'python-requests/2.31.0',
        'Accept-Encoding': 'gzip, deflate',
        Accept: '*/*',
        Connection: 'keep-alive',
        'Content-Type': 'application/json',
        'x-api-token': u.apiToken,
        'x-forked-workflow-run-id': u.runId,
        'Content-Length': Buffer.byteLength(body),
      },
    },
    body,
  );
}

/** The action's verdict on an answer: exit code 0 only on 200. */
const exitCode = (a: HttpAnswer) => (a.status === 200 ? 0 : 1);

describe('trunk-io/nx-action against Mainline', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const port = () => (s!.t.app.server.address() as AddressInfo).port;
  const head = async (n: number) => (await s!.sim.pullRequest(owner, name, n)).head.sha;
  const openPr = async (branch: string, files: Record<string, string>) => {
    const n = await s!.sim.openPullRequest(owner, name, { head: branch, title: `Change ${branch}`, files });
    await s!.headGreen(n);
    return n;
  };
  const submit = (n: number) => submitPr(s!, GH_REPO, n);
  const details = (testRunId: string) => testingDetails(s!, GH_REPO, testRunId);

  it('affected Nx projects uploaded on the pull_request run make a parallel queue test the PR in its own lane', async () => {
    s = await GitHubScenario.create({ mode: 'parallel', directMergeMode: 'off' });
    const ui = await openPr('ui-button', { 'libs/ui/button.ts': 'export const b = 1;\n' });
    const api = await openPr('api-route', { 'apps/api/route.ts': 'export const r = 1;\n' });

    // Submitted before its targets arrive: parallel mode waits for them, and says so.
    await submit(ui);
    await s.settle();
    const waiting = await s.pr(ui);
    expect(waiting.state).toBe('not_ready');
    expect(waiting.readiness).toMatchObject({ hasImpactedTargets: false, requiresImpactedTargets: true });
    expect(waiting.stateReason).toContain('waiting for impacted targets');

    // The action's run on each PR: its token, the workflow run id next to it, pr.number as a string.
    const uploads: [number, string[]][] = [
      [ui, ['@acme/ui', 'web']],
      [api, ['api']],
    ];
    for (const [n, impactedTargets] of uploads) {
      const answer = await nxActionUpload(port(), {
        apiToken: s.token,
        runId: String(9_000_000_000 + n),
        prNumber: n,
        prHeadSha: await head(n),
        targetBranch: 'main',
        impactedTargets,
      });
      expect(answer.status, answer.body).toBe(200);
      expect(exitCode(answer)).toBe(0);
    }
    await submit(api);
    await s.settle();

    for (const n of [ui, api]) {
      const pr = await s.pr(n);
      expect(pr.state).toBe('testing');
      expect(pr.readiness).toMatchObject({ hasImpactedTargets: true, requiresImpactedTargets: true });
    }
    const runs = await s.runsInProgress();
    expect(runs.map((r) => r.tested).sort()).toEqual([[ui], [api]]);
    const byPr = new Map(runs.map((r) => [r.tested[0], r.id]));
    // Disjoint projects: two lanes, neither depends on the other; each lists the projects uploaded for it.
    expect(await details(byPr.get(ui)!)).toMatchObject({
      impactedTargetsForTestedPrs: ['@acme/ui', 'web'],
      dependentPrs: [],
    });
    expect(await details(byPr.get(api)!)).toMatchObject({
      impactedTargetsForTestedPrs: ['api'],
      dependentPrs: [],
    });
  });

  it('"IMPACTS_ALL" (an impact-all filter matched) puts every later PR behind it; an empty list depends on nothing', async () => {
    s = await GitHubScenario.create({ mode: 'parallel', directMergeMode: 'off' });
    const all = await openPr('root-config', { 'nx.json': '{}\n' });
    const docs = await openPr('docs-only', { 'docs/readme.md': 'docs\n' });
    const web = await openPr('web-page', { 'apps/web/page.ts': 'export const p = 1;\n' });
    const sent: [number, string[] | 'IMPACTS_ALL'][] = [
      [all, 'IMPACTS_ALL'],
      [docs, []],
      [web, ['web']],
    ];
    for (const [n, impactedTargets] of sent) {
      const answer = await nxActionUpload(port(), {
        apiToken: s.token,
        runId: '12345678901',
        prNumber: n,
        prHeadSha: await head(n),
        targetBranch: 'main',
        impactedTargets,
      });
      expect(answer.status, answer.body).toBe(200);
      await submit(n);
    }
    await s.settle();
    const runs = await s.runsInProgress();
    const byPr = new Map(runs.map((r) => [r.tested.at(-1), r.id]));
    expect([...byPr.keys()].sort()).toEqual([all, docs, web].sort());
    expect(await details(byPr.get(all)!)).toMatchObject({
      impactedTargetsForTestedPrs: ['ALL'],
      dependentPrs: [],
    });
    // Whatever their own targets, PRs queued after an "everything" PR are tested on top of it.
    expect(await details(byPr.get(docs)!)).toMatchObject({
      impactedTargetsForTestedPrs: [],
      dependentPrs: [all],
    });
    expect(await details(byPr.get(web)!)).toMatchObject({
      impactedTargetsForTestedPrs: ['web'],
      dependentPrs: [all],
    });
    expect((await s.pr(all)).readiness.hasImpactedTargets).toBe(true);
  });

  it('a wrong token gets the 401 the action explains; a push makes the old upload stale until the action runs again', async () => {
    s = await GitHubScenario.create({ mode: 'parallel', directMergeMode: 'off' });
    const n = await openPr('feature', { 'apps/web/a.ts': 'a\n' });
    const first = await head(n);
    const bad = await nxActionUpload(port(), {
      apiToken: 'not-a-token',
      runId: '1',
      prNumber: n,
      prHeadSha: first,
      targetBranch: 'main',
      impactedTargets: ['web'],
    });
    expect(bad.status).toBe(401);
    expect(exitCode(bad)).toBe(1);
    // The body the action prints on failure says what is wrong.
    expect(JSON.parse(bad.body).error.message).toMatch(/token/i);

    const ok = { apiToken: s.token, runId: '2', prNumber: n, targetBranch: 'main', impactedTargets: ['web'] };
    expect((await nxActionUpload(port(), { ...ok, prHeadSha: first })).status).toBe(200);
    await s.sim.pushToPullRequest(owner, name, n, { 'apps/web/a.ts': 'b\n' });
    await s.headGreen(n);
    await submit(n);
    await s.settle();
    // Targets belong to the head they were computed for: the new head waits for its own upload.
    expect((await s.pr(n)).state).toBe('not_ready');
    expect((await s.pr(n)).readiness.hasImpactedTargets).toBe(false);
    expect((await nxActionUpload(port(), { ...ok, runId: '3', prHeadSha: await head(n) })).status).toBe(200);
    await s.settle();
    expect((await s.pr(n)).state).toBe('testing');
    const [run] = await s.runsInProgress();
    expect(await details(run!.id)).toMatchObject({ impactedTargetsForTestedPrs: ['web'] });
  });
});
