// Replay of `trunk-analytics-cli upload` against Mainline over a real socket, step by step as its
// source does it (trunk-io/analytics-cli at commit fcbc1bd2a5f8d730f453f60e4b0b117fd12f93f8):
// - cli/src/upload_command.rs run_upload: the quarantine context (getQuarantineConfig), then
//   upload_bundle (createBundleUpload, the tarball, PUT to the returned url), then telemetry
//   (POST /v1/flakytests-cli/upload-metrics, a protobuf UploadMetrics), whatever the PUT answered.
// - api/src/client.rs: the API client sends `content-type: application/json` and `x-api-token`; the
//   telemetry client `content-type: application/x-protobuf` and `x-api-token`; the PUT (its "s3"
//   client) `content-type: application/octet-stream` and `content-length`. No user agent is set.
//   api/src/message.rs gives the bodies (camelCase; Test has parentName/className and snake_case rest).
// - cli/src/context.rs: getQuarantineConfig is asked about the failed tests, remoteUrls = [repo_url];
//   createBundleUpload gets clientVersion "trunk-analytics-cli <cli_version>", externalId, remoteUrls.
//   generate_internal_file: internal.bin holds every run, is_quarantined from the quarantine answer.
// - bundle/src/bundler.rs: tar of meta.json, internal.bin, junit/0, zstd.
// - cli/src/context_quarantine.rs gather_quarantine_context and cli/src/main.rs: the exit code rule
//   (cliExitCode below); error_report.rs: a failed PUT answered 401/403/404 exits 70 (SOFTWARE), any
//   other error keeps the quarantine exit code.
// - context/src/meta/id.rs gen_info_id: a test's id, v5 UUID (URL namespace) of
//   org#repo_full_name#file#classname#parent#name#JUNIT_TESTCASE.
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import protobuf from 'protobufjs/light.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTar, internalBin, type RunInput, zstdStored } from '../support/bundles.ts';
import { listenOnLoopback } from '../support/raw-http.ts';
import { useTestApp } from '../support/use-test-app.ts';

const ORG = 'acme';
const REPO = { host: 'github.com', owner: 'acme', name: 'shop' };
const REPO_URL = 'https://github.com/acme/shop.git';
const CLI_VERSION = 'cargo=0.12.4 git=fcbc1bd rustc=1.89.0';
const EXIT_SUCCESS = 0;
const EXIT_FAILURE = 1;
const EXIT_SOFTWARE = 70;

interface CaseSpec {
  readonly name: string;
  readonly classname: string;
  readonly file: string;
  readonly status: 'success' | 'failure' | 'skipped';
  readonly message?: string;
}

const SUITE = 'checkout';

/** The JUnit file the test runner wrote. */
function junitXml(cases: readonly CaseSpec[]): string {
  const body = cases
    .map((c) => {
      const inner =
        c.status === 'failure'
          ? `<failure message="${c.message ?? 'failed'}">${c.message ?? 'failed'}\n    at cart.ts:1</failure>`
          : c.status === 'skipped'
            ? '<skipped/>'
            : '';
      return `<testcase name="${c.name}" classname="${c.classname}" file="${c.file}" time="0.125">${inner}</testcase>`;
    })
    .join('\n');
  return `<?xml version="1.0"?>\n<testsuites><testsuite name="${SUITE}" timestamp="2026-07-02T09:00:00Z" tests="${cases.length}">\n${body}\n</testsuite></testsuites>\n`;
}

/** uuid v5 in the URL namespace (RFC 4122 §4.3). */
function uuidV5(name: string): string {
  const namespace = Buffer.from('6ba7b8119dad11d180b400c04fd430c8', 'hex');
  const hash = createHash('sha1').update(namespace).update(name, 'utf8').digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** gen_info_id without a custom id or variant. */
function genInfoId(c: CaseSpec): string {
  const repoFullName = `${REPO.host}/${REPO.owner}/${REPO.name}`;
  return uuidV5([ORG, repoFullName, c.file, c.classname, SUITE, c.name, 'JUNIT_TESTCASE'].join('#'));
}

/** A failed test as the CLI describes it (bundle/src/types.rs Test). */
function testOf(c: CaseSpec) {
  return {
    name: c.name,
    parentName: SUITE,
    className: c.classname,
    file: c.file,
    id: genInfoId(c),
    timestamp_millis: Date.parse('2026-07-02T09:00:00Z'),
    is_quarantined: false,
    failure_message: c.message ?? 'failed',
    variant: '',
  };
}

/**
 * gather_quarantine_context's exit code: without failures, the test run's (or 0); quarantining
 * disabled for the repository, the test run's (or 0); otherwise the test run's, else 1 when a test
 * failed, overridden to 0 when every failure is quarantined.
 */
function cliExitCode(input: {
  failures: readonly { id: string }[];
  quarantinedIds: readonly string[];
  isDisabled: boolean;
  testRunExitCode: number | undefined;
}): number {
  const { failures, testRunExitCode } = input;
  if (input.isDisabled) return testRunExitCode ?? EXIT_SUCCESS;
  const exitCode = testRunExitCode ?? (failures.length > 0 ? EXIT_FAILURE : EXIT_SUCCESS);
  if (failures.length === 0) return exitCode;
  const quarantined = failures.filter((f) => input.quarantinedIds.includes(f.id));
  if (quarantined.length !== failures.length) return exitCode;
  return EXIT_SUCCESS;
}

/** UploadMetrics (proto/proto/upload_metrics.proto field numbers), for the telemetry body. */
const telemetry = protobuf.Root.fromJSON({
  nested: {
    Semver: {
      fields: {
        major: { type: 'uint32', id: 1 },
        minor: { type: 'uint32', id: 2 },
        patch: { type: 'uint32', id: 3 },
        suffix: { type: 'string', id: 4 },
      },
    },
    Repo: {
      fields: {
        host: { type: 'string', id: 1 },
        owner: { type: 'string', id: 2 },
        name: { type: 'string', id: 3 },
      },
    },
    Timestamp: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
    UploadMetrics: {
      fields: {
        clientVersion: { type: 'Semver', id: 1 },
        repo: { type: 'Repo', id: 2 },
        cliStartedAt: { type: 'Timestamp', id: 3 },
        uploadStartedAt: { type: 'Timestamp', id: 4 },
        uploadFinishedAt: { type: 'Timestamp', id: 5 },
        failed: { type: 'bool', id: 6 },
        failureReason: { type: 'string', id: 7 },
        quarantineQueryResult: { type: 'int32', id: 8 },
      },
    },
  },
}).lookupType('UploadMetrics');

const QUARANTINE_QUERY_SUCCESS = 1;
const QUARANTINE_QUERY_SKIPPED = 4;

interface Sent {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

interface Answer {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: an answer's JSON, read as the test needs it.
  readonly json: () => any;
}

describe('trunk-analytics-cli upload, replayed', () => {
  const t = useTestApp();
  let port: number;
  let token: string;

  beforeAll(async () => {
    port = await listenOnLoopback(t.app);
    token = await t.token(ORG);
  });

  /** One request as reqwest sends it: only the client's default headers, Host and Content-Length. */
  function send(sent: Sent): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: sent.method,
          path: sent.path,
          headers: { accept: '*/*', ...sent.headers, 'content-length': String(sent.body.length) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, json: () => JSON.parse(text) });
          });
        },
      );
      req.on('error', reject);
      req.end(Buffer.from(sent.body));
    });
  }

  const api = (path: string, body: unknown) =>
    send({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', 'x-api-token': token },
      body: Buffer.from(JSON.stringify(body)),
    });

  /** `trunk-analytics-cli upload --junit-paths out/*.xml` for one CI run; answers its exit code. */
  async function upload(run: { sha: string; cases: readonly CaseSpec[]; testRunExitCode?: number }) {
    const cliStartedAt = Date.now();
    const calls: string[] = [];
    const filesFound = run.cases.length > 0;
    const failures = run.cases.filter((c) => c.status === 'failure').map(testOf);

    // 1. The quarantine context: asked only when a JUnit file has a failed test.
    let quarantinedIds: string[] = [];
    let isDisabled = false;
    let fetched = false;
    if (filesFound && failures.length > 0) {
      const res = await api('/v1/metrics/getQuarantineConfig', {
        repo: REPO,
        remoteUrls: [REPO_URL],
        orgUrlSlug: ORG,
        testIdentifiers: failures,
      });
      calls.push(`getQuarantineConfig ${res.status}`);
      expect(res.status).toBe(200);
      quarantinedIds = res.json().testIds;
      isDisabled = res.json().isDisabled;
      fetched = true;
    }
    const exitCode = cliExitCode({
      failures,
      quarantinedIds,
      isDisabled,
      testRunExitCode: run.testRunExitCode,
    });
    const quarantined = failures.filter((f) => quarantinedIds.includes(f.id));
    const notQuarantined = failures.filter((f) => !quarantinedIds.includes(f.id));

    // 2. internal.bin, from the same JUnit and the quarantine answer.
    const runs: RunInput[] = run.cases.map((c) => ({
      name: c.name,
      classname: c.classname,
      file: c.file,
      parentName: SUITE,
      status: c.status === 'success' ? 1 : c.status === 'failure' ? 2 : 3,
      startedAt: { seconds: Date.parse('2026-07-02T09:00:00Z') / 1000, nanos: 0 },
      finishedAt: { seconds: Date.parse('2026-07-02T09:00:00Z') / 1000, nanos: 125_000_000 },
      isQuarantined: quarantinedIds.includes(genInfoId(c)),
      ...(c.status === 'failure'
        ? {
            statusOutputMessage: `${c.message}\n    at cart.ts:1`,
            output: { text: `${c.message}\n    at cart.ts:1`, message: c.message },
          }
        : {}),
    }));

    // 3. createBundleUpload.
    const created = await api('/v1/metrics/createBundleUpload', {
      repo: REPO,
      orgUrlSlug: ORG,
      clientVersion: `trunk-analytics-cli ${CLI_VERSION}`,
      remoteUrls: [REPO_URL],
      externalId: null,
      testCollectionShortId: null,
    });
    calls.push(`createBundleUpload ${created.status}`);
    expect(created.status).toBe(200);
    const upload = created.json() as { id: string; idV2: string; url: string; key: string };

    // 4. The bundle: meta.json (BundleMetaV0_7_8, flattened), internal.bin, junit/0.
    const file = {
      original_path: '/home/runner/work/shop/shop/out/report.xml',
      original_path_rel: 'out/report.xml',
      path: 'junit/0',
      owners: [],
      team: null,
    };
    const meta = {
      version: '1',
      cli_version: CLI_VERSION,
      org: ORG,
      repo: {
        repo: REPO,
        repo_root: '/home/runner/work/shop/shop',
        repo_url: REPO_URL,
        repo_head_sha: run.sha,
        repo_head_sha_short: run.sha.slice(0, 7),
        repo_head_branch: 'refs/heads/main',
        repo_head_commit_epoch: 1782982800,
        repo_head_commit_message: 'Apply the discount before tax',
        repo_head_author_name: 'Grace Hopper',
        repo_head_author_email: 'grace@example.com',
      },
      bundle_upload_id: upload.id,
      tags: [],
      file_sets: filesFound
        ? [{ file_set_type: 'Junit', files: [file], glob: 'out/*.xml', resolved_status: null }]
        : [],
      envs: {
        CI: 'true',
        GITHUB_ACTIONS: 'true',
        GITHUB_REPOSITORY: 'acme/shop',
        GITHUB_REF: 'refs/heads/main',
        GITHUB_REF_NAME: 'main',
        GITHUB_SHA: run.sha,
        GITHUB_RUN_ID: '42',
        GITHUB_WORKFLOW: 'CI',
        GITHUB_JOB: 'test',
      },
      upload_time_epoch: Math.floor(Date.now() / 1000),
      test_command: null,
      os_info: 'linux',
      quarantined_tests: quarantined.map((f) => ({ ...f, is_quarantined: true })),
      codeowners: null,
      use_uncloned_repo: false,
      num_files: filesFound ? 1 : 0,
      num_tests: run.cases.length,
      command_line: 'trunk-analytics-cli upload --junit-paths out/*.xml --org-url-slug acme',
      trunk_envs: {},
      bundle_upload_id_v2: upload.idV2,
      variant: null,
      internal_bundled_file: {
        original_path: '/tmp/.tmpZ9y8X7/internal.bin',
        original_path_rel: null,
        path: 'internal.bin',
        owners: [],
        team: null,
      },
      failed_tests: notQuarantined,
    };
    const tar = await buildTar([
      { name: 'meta.json', data: JSON.stringify(meta) },
      { name: 'internal.bin', data: internalBin([runs]) },
      ...(filesFound ? [{ name: 'junit/0', data: junitXml(run.cases) }] : []),
    ]);
    const bundle = zstdStored(tar, 128 * 1024);

    // 5. The PUT, to the url as given (its path and query, on this server).
    const uploadStartedAt = Date.now();
    const url = new URL(upload.url);
    const put = await send({
      method: 'PUT',
      path: url.pathname + url.search,
      headers: { 'content-type': 'application/octet-stream' },
      body: bundle,
    });
    calls.push(`PUT ${put.status}`);
    const putFailed = put.status >= 400;

    // 6. Telemetry, whatever the PUT answered.
    const ts = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });
    const metrics = telemetry
      .encode(
        telemetry.fromObject({
          clientVersion: { major: 0, minor: 12, patch: 4, suffix: '' },
          repo: REPO,
          cliStartedAt: ts(cliStartedAt),
          uploadStartedAt: ts(uploadStartedAt),
          uploadFinishedAt: ts(Date.now()),
          failed: putFailed,
          failureReason: putFailed ? `${put.status}` : '',
          quarantineQueryResult: fetched ? QUARANTINE_QUERY_SUCCESS : QUARANTINE_QUERY_SKIPPED,
        }),
      )
      .finish();
    const sentMetrics = await send({
      method: 'POST',
      path: '/v1/flakytests-cli/upload-metrics',
      headers: { 'content-type': 'application/x-protobuf', 'x-api-token': token },
      body: metrics,
    });
    calls.push(`upload-metrics ${sentMetrics.status}`);

    // 7. main.rs: an error report's exit code (401/403/404: SOFTWARE), else the quarantine one.
    const errorExit = putFailed && [401, 403, 404].includes(put.status) ? EXIT_SOFTWARE : undefined;
    return { exitCode: errorExit ?? exitCode, calls, put, telemetryStatus: sentMetrics.status };
  }

  const cart = (name: string, status: CaseSpec['status'], message?: string): CaseSpec => ({
    name,
    classname: 'shop.CartTest',
    file: 'src/cart.test.ts',
    status,
    ...(message === undefined ? {} : { message }),
  });

  it('a run with an unquarantined failure: every call answered, tests stored, exit 1', async () => {
    const out = await upload({
      sha: '1'.repeat(40),
      cases: [
        cart('adds an item', 'success'),
        cart('applies the discount', 'failure', 'expected 90 to be 81'),
        cart('ships abroad', 'skipped'),
      ],
    });
    expect(out.calls).toEqual([
      'getQuarantineConfig 200',
      'createBundleUpload 200',
      'PUT 200',
      'upload-metrics 200',
    ]);
    const body = out.put.json();
    expect(body.counts).toMatchObject({ files: 1, test_cases: 3, failures: 1, skipped: 1 });
    expect(body.failed_tests).toEqual([
      expect.objectContaining({
        name: 'applies the discount',
        test_case_id: genInfoId(cart('applies the discount', 'failure')),
        quarantined: false,
      }),
    ]);
    expect(body.problems).toBeUndefined();
    expect(out.exitCode).toBe(EXIT_FAILURE);
  });

  it('once that test is quarantined, the next run’s failure of it exits 0 (the CLI’s quarantine rule)', async () => {
    const failing = cart('applies the discount', 'failure', 'expected 90 to be 81');
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo: REPO, org_url_slug: ORG, test_id: genInfoId(failing), setting: 'ALWAYS_QUARANTINE' },
      token,
    );
    expect(override.statusCode, override.body).toBe(200);
    // The test command itself exited 1 (--test-process-exit-code 1): every failure is quarantined.
    const out = await upload({
      sha: '2'.repeat(40),
      cases: [cart('adds an item', 'success'), failing],
      testRunExitCode: 1,
    });
    expect(out.calls).toEqual([
      'getQuarantineConfig 200',
      'createBundleUpload 200',
      'PUT 200',
      'upload-metrics 200',
    ]);
    expect(out.exitCode).toBe(EXIT_SUCCESS);
    // The server's answer agrees with the CLI's decision.
    expect(out.put.json()).toMatchObject({ all_failures_quarantined: true });

    // A second failure that is not quarantined: the CLI keeps the failing exit code.
    const worse = await upload({
      sha: '3'.repeat(40),
      cases: [failing, cart('removes an item', 'failure', 'expected [] to have length 1')],
    });
    expect(worse.exitCode).toBe(EXIT_FAILURE);
    expect(worse.put.json()).toMatchObject({ all_failures_quarantined: false });
  });

  it('a run that found no test files (allowed by default) uploads its empty bundle: 200 with the problem, exit 0', async () => {
    const out = await upload({ sha: '4'.repeat(40), cases: [] });
    expect(out.calls).toEqual(['createBundleUpload 200', 'PUT 200', 'upload-metrics 200']);
    expect(out.put.json().problems.at(-1)).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(/^No test results were stored/),
    });
    expect(out.exitCode).toBe(EXIT_SUCCESS);
  });
});
