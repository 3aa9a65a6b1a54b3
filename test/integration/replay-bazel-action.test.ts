/**
 * Replay of trunk-io/bazel-action, read at commit 3e7d4e893f2c4c3c1b16e07f3db8ff3585e4025d (action.yaml,
 * src/scripts/prerequisites.sh, compute_impacted_targets.sh, upload_impacted_targets.sh, tests/upload.test.ts).
 * Written from what it sends, not from its code:
 *
 * - compute: bazel-diff's get-impacted-targets between the target branch head and the PR merged onto it
 *   writes one Bazel label per line (`//pkg/foo:bar`, `@repo//:t`, `@@canonical+//x:y`); the file can be empty;
 * - upload (step "Upload Impacted Targets", continue-on-error): jq builds the body into a file, pretty-printed
 *   with two-space indents, `{"repo": {"host": "github.com", "owner", "name"}, "pr": {"number": <string>,
 *   "sha": <PR head>}, "targetBranch", "impactedTargets": [labels, empty lines dropped] | "ALL"}`; curl sends it
 *   with `-d @file` (which strips the file's newlines), `-H "Content-Type: application/json"` and
 *   `-H "x-api-token:<token>"` (no space after the colon) to API_URL, default
 *   https://api.trunk.io:443/v1/setImpactedTargets; no fork header;
 * - its answer: only the status is read (`-o /dev/null -w '%{http_code}'`); 200 is success, anything else
 *   exits 1 (401 with a message about the token for bots). Its own tests upload up to 100,000 targets.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GH_REPO, GitHubScenario } from '../support/github-scenario.ts';
import { submitPr, testingDetails } from '../support/queue-api.ts';

const { owner, name } = GH_REPO;

interface BazelUpload {
  apiToken: string;
  prNumber: number;
  prSha: string;
  targetBranch: string;
  /** The impacted-targets file's content (one label a line), or "ALL" when an impact-all filter matched. */
  targetsFile: string | 'ALL';
}

/** The body file jq writes, as `curl -d @file` sends it: newlines removed, indentation kept. */
function bodyOf(u: BazelUpload): string {
  const labels = u.targetsFile === 'ALL' ? 'ALL' : u.targetsFile.split('\n').filter((l) => l.length > 0);
  const body = {
    repo: { host: 'github.com', owner, name },
    pr: { number: String(u.prNumber), sha: u.prSha },
    targetBranch: u.targetBranch,
    impactedTargets: labels,
  };
  return JSON.stringify(body, null, 2).replace(/[\r\n]/g, '');
}

/**
 * Writes the request curl writes (request line and headers byte for byte, no Connection header) and reads
 * the status line of the answer; the connection stays open as curl's would, so the answer is read by
 * its Content-Length.
 */
function curlPost(port: number, u: BazelUpload): Promise<{ status: number; body: string }> {
  const body = Buffer.from(bodyOf(u));
  const head =
    'POST /v1/setImpactedTargets HTTP/1.1\r\n' +
    `Host: 127.0.0.1:${port}\r\n` +
    'User-Agent: curl/8.14.1\r\n' +
    'Accept: */*\r\n' +
    'Content-Type: application/json\r\n' +
    `x-api-token:${u.apiToken}\r\n` +
    `Content-Length: ${body.length}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 30 s'));
    }, 30_000);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const end = got.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = got.subarray(0, end).toString();
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(headers)?.[1] ?? 0);
      if (got.length < end + 4 + length) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        status: Number(headers.split(' ')[1]),
        body: got.subarray(end + 4, end + 4 + length).toString(),
      });
    });
    socket.write(head);
    socket.write(body);
  });
}

describe('trunk-io/bazel-action against Mainline', () => {
  let s: GitHubScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const port = () => (s!.t.app.server.address() as net.AddressInfo).port;
  const head = async (n: number) => (await s!.sim.pullRequest(owner, name, n)).head.sha;
  const openPr = async (branch: string) => {
    const n = await s!.sim.openPullRequest(owner, name, {
      head: branch,
      title: `Change ${branch}`,
      files: { [`${branch}/BUILD`]: 'filegroup(name = "x")\n' },
    });
    await s!.headGreen(n);
    return n;
  };
  const upload = async (n: number, targetsFile: string | 'ALL', apiToken = s!.token) =>
    curlPost(port(), { apiToken, prNumber: n, prSha: await head(n), targetBranch: 'main', targetsFile });
  const submit = (n: number) => submitPr(s!, GH_REPO, n);
  const detailsByPr = async () => {
    const out = new Map<number, { impactedTargetsForTestedPrs: string[]; dependentPrs: number[] }>();
    for (const run of await s!.runsInProgress()) {
      out.set(run.tested.at(-1)!, await testingDetails(s!, GH_REPO, run.id));
    }
    return out;
  };

  // Labels as bazel-diff prints them: main repository, external and canonical (bzlmod) repositories, the
  // root package, and target names with the punctuation Bazel allows in them.
  const labels = [
    '//pkg/foo:bar',
    '//pkg/foo/bar/baz:baz_test',
    '//:root',
    '@maven//:com_google_guava_guava',
    '@@rules_go+//go/tools:nogo',
    '@@rules_python~0.31.0~pip~pypi_311_requests//:pkg',
    '//pkg/odd:name with "quotes", (parens) & +=;<>?[]{|}~!%^$#\'',
  ];

  it('uploads Bazel labels that come back exactly in the testing details, and lanes follow shared labels', async () => {
    s = await GitHubScenario.create({ mode: 'parallel', directMergeMode: 'off' });
    const a = await openPr('a');
    const b = await openPr('b');
    const c = await openPr('c');
    // bazel-diff's file ends with a newline; mapfile and the jq filter drop the empty line it leaves.
    const sent: [number, string][] = [
      [a, `${labels.join('\n')}\n`],
      [b, '//other:lib\n//other:lib_test\n'],
      [c, '//pkg/foo:bar\n'],
    ];
    for (const [n, file] of sent) {
      const answer = await upload(n, file);
      expect(answer.status, answer.body).toBe(200);
      await submit(n);
    }
    await s.settle();
    const details = await detailsByPr();
    expect([...details.keys()].sort()).toEqual([a, b, c]);
    expect([...details.get(a)!.impactedTargetsForTestedPrs].sort()).toEqual([...labels].sort());
    expect(details.get(a)!.dependentPrs).toEqual([]);
    expect(details.get(b)).toMatchObject({
      impactedTargetsForTestedPrs: ['//other:lib', '//other:lib_test'],
      dependentPrs: [],
    });
    // c touches //pkg/foo:bar, which a touches too: tested on top of a, not of b.
    expect(details.get(c)).toMatchObject({
      impactedTargetsForTestedPrs: ['//pkg/foo:bar'],
      dependentPrs: [a],
    });
    for (const n of [a, b, c]) expect((await s.pr(n)).readiness.hasImpactedTargets).toBe(true);
  });

  it('"ALL" puts later PRs behind it; an empty targets file is an upload of no targets, not a failure', async () => {
    s = await GitHubScenario.create({ mode: 'parallel', directMergeMode: 'off' });
    const none = await openPr('docs');
    const all = await openPr('workspace');
    const later = await openPr('later');
    expect((await upload(none, '')).status).toBe(200);
    expect((await upload(all, 'ALL')).status).toBe(200);
    expect((await upload(later, '//later:lib\n')).status).toBe(200);
    for (const n of [none, all, later]) await submit(n);
    await s.settle();
    const details = await detailsByPr();
    expect(details.get(none)).toMatchObject({ impactedTargetsForTestedPrs: [], dependentPrs: [] });
    expect(details.get(all)).toMatchObject({ impactedTargetsForTestedPrs: ['ALL'], dependentPrs: [none] });
    // Tested on top of the "ALL" PR, and so of everything that one is tested on top of.
    expect(details.get(later)).toMatchObject({
      impactedTargetsForTestedPrs: ['//later:lib'],
      dependentPrs: [none, all],
    });
  });

  it('takes the 100,000 targets its own tests upload, and answers a wrong or empty token with 401', async () => {
    s = await GitHubScenario.create({ mode: 'parallel', directMergeMode: 'off' });
    const n = await openPr('big');
    const many = Array.from({ length: 100_000 }, (_, i) => `//generated/pkg${i % 100}:target_${i}`);
    const answer = await upload(n, `${many.join('\n')}\n`);
    expect(answer.status, answer.body).toBe(200);
    await submit(n);
    await s.settle();
    const details = await detailsByPr();
    expect(details.get(n)!.impactedTargetsForTestedPrs).toHaveLength(100_000);
    expect(new Set(details.get(n)!.impactedTargetsForTestedPrs)).toEqual(new Set(many));

    // API_TOKEN set but empty (a Dependabot run without the secret) and a wrong one: 401, the action exits 1.
    const other = await openPr('other');
    for (const token of ['', 'not-a-token']) {
      const refused = await upload(other, '//x:y\n', token);
      expect(refused.status).toBe(401);
    }
    expect((await s.pr(other)).error?.code).toBe('PR_NOT_FOUND');
  });
});
