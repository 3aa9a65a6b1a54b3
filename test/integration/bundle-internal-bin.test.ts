// Bundles whose test results are in internal.bin, the protobuf TestReport trunk-analytics-cli puts in
// every bundle (issue 23, finding 1). Written from trunk-io/analytics-cli at commit
// fcbc1bd2a5f8d730f453f60e4b0b117fd12f93f8: proto/proto/test_context.proto (TestReport.test_results = 1,
// TestResult.test_case_runs = 1, TestCaseRun fields), bundle/src/bundler.rs and files.rs (tar layout,
// internal/<n> for .bin files), cli/src/context.rs generate_internal_file (an Internal file set's one
// file is taken as internal.bin), context/src/junit/parser.rs (JUnit → TestCaseRun; bin_parse reads a
// bare TestResult too), test_report/src/report.rs (what the rspec plugin records: attempt_index per
// retry, started/finished at whole seconds, test_output {text: backtrace, message}).
// The internal.bin files here are encoded with Mainline's own schema (src/domain/internal-bin).
import { describe, expect, it } from 'vitest';
import {
  analyticsCliBundle,
  type BundleRepo,
  internalBin,
  internalBinAsTestResult,
  type RunInput,
  rspecPluginBundle,
} from '../support/bundles.ts';
import { storedTestsOf, uploadOf } from '../support/reads.ts';
import { putBundle } from '../support/seed.ts';
import { useTestApp } from '../support/use-test-app.ts';

const SUCCESS = 1;
const FAILURE = 2;
const SKIPPED = 3;
const AT = 1_782_900_000; // seconds

/** One report, as JUnit XML and as the TestCaseRuns the CLI builds from it (parser.rs into_test_case_runs). */
const JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="billing.invoice" timestamp="2026-07-01T10:00:00Z" tests="3" failures="1">
    <testcase name="rounds the total" classname="billing.InvoiceTest" file="src/billing/invoice.test.ts" time="0.5">
      <failure message="expected 10.01 to be 10" type="AssertionError">at invoice.test.ts:12</failure>
    </testcase>
    <testcase name="adds tax" classname="billing.InvoiceTest" file="src/billing/invoice.test.ts" time="0.25"/>
    <testcase name="converts currency" classname="billing.InvoiceTest" file="src/billing/invoice.test.ts">
      <skipped/>
    </testcase>
  </testsuite>
</testsuites>
`;
const STARTED = { seconds: Date.parse('2026-07-01T10:00:00Z') / 1000, nanos: 0 };
const SAME_RUNS: RunInput[] = [
  {
    name: 'rounds the total',
    classname: 'billing.InvoiceTest',
    file: 'src/billing/invoice.test.ts',
    parentName: 'billing.invoice',
    status: FAILURE,
    startedAt: STARTED,
    finishedAt: { seconds: STARTED.seconds, nanos: 500_000_000 },
    statusOutputMessage: 'at invoice.test.ts:12',
    output: { text: 'at invoice.test.ts:12', message: 'expected 10.01 to be 10' },
  },
  {
    name: 'adds tax',
    classname: 'billing.InvoiceTest',
    file: 'src/billing/invoice.test.ts',
    parentName: 'billing.invoice',
    status: SUCCESS,
    startedAt: STARTED,
    finishedAt: { seconds: STARTED.seconds, nanos: 250_000_000 },
  },
  {
    name: 'converts currency',
    classname: 'billing.InvoiceTest',
    file: 'src/billing/invoice.test.ts',
    parentName: 'billing.invoice',
    status: SKIPPED,
    startedAt: STARTED,
  },
];

/** What the rspec plugin records for a spec file: one example retried (fails, then passes), one failing. */
function rspecRuns(): RunInput[] {
  const example = (
    name: string,
    line: number,
    status: number,
    attempt: number,
    failure?: string,
  ): RunInput => ({
    id: `trunk:./spec/models/user_spec.rb[1:${line}]-./spec/models/user_spec.rb`,
    name: `User ${name}`,
    classname: 'spec.models.user_spec',
    file: './spec/models/user_spec.rb',
    parentName: 'User',
    line,
    lineNumber: { number: line },
    status,
    attemptIndex: { number: attempt },
    startedAt: { seconds: AT + attempt, nanos: 0 },
    finishedAt: { seconds: AT + attempt + 1, nanos: 0 },
    statusOutputMessage: failure ?? '',
    ...(failure === undefined
      ? {}
      : { output: { text: `${failure}\n# ./spec/models/user_spec.rb:${line}`, message: failure } }),
  });
  return [
    example('validates the email', 4, FAILURE, 0, 'expected valid? to be false'),
    example('validates the email', 4, SUCCESS, 1),
    example('hashes the password', 9, FAILURE, 0, 'expected "x" to eq "y"'),
    example('has a name', 14, SUCCESS, 0),
  ];
}

describe('bundles whose tests are in internal.bin', () => {
  const t = useTestApp();

  async function put(repo: BundleRepo, bundle: Uint8Array) {
    const created = await t.post('/v1/metrics/createBundleUpload', { repo, orgUrlSlug: 'acme' }, t.orgToken);
    expect(created.statusCode, created.body).toBe(200);
    const res = await putBundle(t, created.json().url, bundle);
    return { res, url: created.json().url as string };
  }

  async function storedTests(repo: BundleRepo) {
    return (await storedTestsOf(t, repo)).sort((a, b) => a.name.localeCompare(b.name));
  }

  async function failingTests(repo: BundleRepo) {
    const now = Date.now();
    const res = await t.post(
      '/v1/flaky-tests/list-failing-tests',
      {
        repo,
        org_url_slug: 'acme',
        start_time: new Date(now - 3_600_000).toISOString(),
        end_time: new Date(now + 60_000).toISOString(),
        page_query: { page_size: 50 },
      },
      t.orgToken,
    );
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().tests as { name: string }[]).map((x) => x.name).sort();
  }

  it('stores the tests of an rspec plugin bundle (meta.json and internal/0 only), retries and all', async () => {
    const repo = { host: 'github.com', owner: 'acme', name: 'rspec-app' };
    const { res } = await put(
      repo,
      await rspecPluginBundle({ repo, sha: 'a1'.repeat(20), bin: internalBin([rspecRuns()]) }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.counts).toEqual({
      files: 1,
      test_cases: 3,
      attempts: 4,
      failures: 2,
      retries: 1,
      skipped: 0,
    });
    expect(body.files).toEqual([
      {
        name: 'internal/0',
        ok: true,
        counts: { test_cases: 4, attempts: 4, failures: 2, retries: 1, skipped: 0 },
        problems: [],
      },
    ]);
    expect(body.problems).toBeUndefined();
    // The retried example passed in the end: only the other one failed.
    expect(body.failed_tests.map((f: { name: string }) => f.name)).toEqual(['User hashes the password']);
    const stored = await storedTests(repo);
    expect(stored.map((x) => [x.name, x.parent, x.classname, x.file])).toEqual([
      ['User has a name', 'User', 'spec.models.user_spec', './spec/models/user_spec.rb'],
      ['User hashes the password', 'User', 'spec.models.user_spec', './spec/models/user_spec.rb'],
      ['User validates the email', 'User', 'spec.models.user_spec', './spec/models/user_spec.rb'],
    ]);
    expect(await failingTests(repo)).toEqual(['User hashes the password', 'User validates the email']);
  });

  it('reads an early rspec plugin’s internal.bin, a bare TestResult (as the CLI’s bin_parse does)', async () => {
    const repo = { host: 'github.com', owner: 'acme', name: 'rspec-old' };
    const bin = internalBinAsTestResult(rspecRuns());
    const { res } = await put(repo, await rspecPluginBundle({ repo, sha: 'a2'.repeat(20), bin }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().counts).toMatchObject({ test_cases: 3, attempts: 4, failures: 2, retries: 1 });
    expect((await storedTests(repo)).length).toBe(3);
  });

  it('gives the same tests from JUnit, from internal.bin, and from both (JUnit is the source then)', async () => {
    const junitOnly = { host: 'github.com', owner: 'acme', name: 'same-junit' };
    const binOnly = { host: 'github.com', owner: 'acme', name: 'same-bin' };
    const both = { host: 'github.com', owner: 'acme', name: 'same-both' };
    const bin = internalBin([SAME_RUNS]);
    const answers = [
      await put(
        junitOnly,
        await analyticsCliBundle({ repo: junitOnly, sha: 'b1'.repeat(20), junit: [JUNIT] }),
      ),
      await put(binOnly, await analyticsCliBundle({ repo: binOnly, sha: 'b1'.repeat(20), internalBin: bin })),
      await put(
        both,
        await analyticsCliBundle({ repo: both, sha: 'b1'.repeat(20), junit: [JUNIT], internalBin: bin }),
      ),
    ].map(({ res }) => {
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    });
    for (const body of answers) {
      expect(body.counts).toMatchObject({ test_cases: 3, attempts: 3, failures: 1, skipped: 1, retries: 0 });
      expect(
        body.failed_tests.map((f: { name: string; parent: string; classname: string; file: string }) => [
          f.name,
          f.parent,
          f.classname,
          f.file,
        ]),
      ).toEqual([
        ['rounds the total', 'billing.invoice', 'billing.InvoiceTest', 'src/billing/invoice.test.ts'],
      ]);
      expect(body.problems).toBeUndefined();
    }
    // With both, the JUnit file was ingested and internal.bin not read.
    expect(answers[2].files.map((f: { name: string }) => f.name)).toEqual([
      '/home/runner/work/web/web/out/report0.xml',
    ]);
    const shapes = await Promise.all(
      [junitOnly, binOnly, both].map(async (r) =>
        (await storedTests(r)).map((x) => [x.name, x.parent, x.classname, x.file]),
      ),
    );
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[2]).toEqual(shapes[0]);
    // The same ids in one repository: internal.bin after JUnit adds no test, and the failure is the same test's.
    const ids = (await storedTests(junitOnly)).map((x) => x.id);
    const again = await put(
      junitOnly,
      await analyticsCliBundle({ repo: junitOnly, sha: 'b2'.repeat(20), internalBin: bin }),
    );
    expect(again.res.statusCode, again.res.body).toBe(200);
    expect((await storedTests(junitOnly)).map((x) => x.id)).toEqual(ids);
    expect(again.res.json().failed_tests[0].test_case_id).toBe(answers[0].failed_tests[0].test_case_id);
  });

  it('answers a bundle with no test at all with an error problem, stored with the upload, not a silent 200', async () => {
    const repo = { host: 'github.com', owner: 'acme', name: 'empty-run' };
    // What the CLI sends when its globs found no file (allow_empty_test_results defaults to true):
    // no file set, and an internal.bin without runs.
    const { res, url } = await put(
      repo,
      await analyticsCliBundle({ repo, sha: 'c1'.repeat(20), internalBin: internalBin([[]]) }),
    );
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.counts).toMatchObject({ files: 1, test_cases: 0, attempts: 0 });
    expect(body.files[0]).toMatchObject({ name: 'internal.bin', ok: true });
    expect(body.files[0].problems).toEqual([
      { severity: 'warning', message: 'internal.bin holds no test case runs' },
    ]);
    expect(body.problems).toEqual([
      {
        severity: 'error',
        message: expect.stringMatching(/^No test results were stored: the upload holds no test case/),
      },
    ]);
    // The upload's record holds the same problems: the answer again (same URL) says so too.
    const row = await uploadOf(t, 'c1'.repeat(20));
    expect(JSON.parse(row.result).problems).toEqual(body.problems);
    const u = new URL(url);
    const repeat = await t.app.inject({
      method: 'PUT',
      url: u.pathname + u.search,
      payload: Buffer.from('x'),
    });
    expect(repeat.statusCode).toBe(200);
    expect(repeat.json()).toMatchObject({ duplicate: true, problems: body.problems });

    // No JUnit file and no internal.bin at all.
    const bare = await put(repo, await analyticsCliBundle({ repo, sha: 'c2'.repeat(20) }));
    expect(bare.res.statusCode, bare.res.body).toBe(200);
    expect(bare.res.json().files).toEqual([]);
    expect(bare.res.json().problems).toEqual([
      { severity: 'warning', message: 'the bundle contains no JUnit files' },
      { severity: 'error', message: expect.stringMatching(/^No test results were stored/) },
    ]);
  });

  it.each([
    [
      'garbage bytes',
      Buffer.from('this is not a protobuf at all, just text \u0000\u0001\u0002'),
      /not a valid test report/,
    ],
    // field 1 (a result) declaring 2 GiB − 1 bytes: refused at its header, nothing allocated.
    [
      'a length beyond the file',
      Uint8Array.of(0x0a, 0xff, 0xff, 0xff, 0xff, 0x07, 0x0a),
      /runs past|ends in the middle/,
    ],
    // a run declaring 20 MiB (over the 16 MiB a run may be): refused before its bytes are read.
    [
      'a run larger than a run may be',
      Uint8Array.of(0x0a, 0x85, 0x80, 0x80, 0x0a, 0x0a, 0x80, 0x80, 0x80, 0x0a),
      /the limit is 16777216/,
    ],
    ['an end-group wire type', Uint8Array.of(0x0c), /wire type 4/],
    ['a truncated run', internalBin([SAME_RUNS]).subarray(0, 40), /ends in the middle/],
  ])('refuses internal.bin holding %s with a problem, not a 500', async (_what, bytes, message) => {
    const repo = { host: 'github.com', owner: 'acme', name: 'hostile' };
    const { res } = await put(repo, await rspecPluginBundle({ repo, sha: 'd1'.repeat(20), bin: bytes }));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.files).toHaveLength(1);
    expect(body.files[0]).toMatchObject({
      name: 'internal/0',
      ok: false,
      counts: { test_cases: 0, attempts: 0 },
    });
    expect(body.files[0].problems.at(-1)).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(message),
    });
    expect(body.problems.at(-1)).toMatchObject({
      severity: 'error',
      message: expect.stringMatching(/^No test results/),
    });
  });
});

describe('internal.bin within the upload’s attempt limit', () => {
  const t = useTestApp({ env: { MAINLINE_MAX_UPLOAD_ATTEMPTS: '50' } });

  it('refuses an internal.bin of more runs than MAINLINE_MAX_UPLOAD_ATTEMPTS (empty runs cost nothing to send)', async () => {
    const repo = { host: 'github.com', owner: 'acme', name: 'many-runs' };
    const runs = Array.from({ length: 60 }, (_, i): RunInput => ({ name: `t${i}`, status: SUCCESS }));
    const created = await t.post('/v1/metrics/createBundleUpload', { repo, orgUrlSlug: 'acme' }, t.orgToken);
    const res = await putBundle(
      t,
      created.json().url,
      await rspecPluginBundle({ repo, sha: 'e1'.repeat(20), bin: internalBin([runs]) }),
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().files[0]).toMatchObject({ ok: false, counts: { attempts: 0 } });
    expect(res.json().files[0].problems.at(-1).message).toBe(
      'internal/0 has more than 50 test case runs, the most one upload may hold (MAINLINE_MAX_UPLOAD_ATTEMPTS)',
    );
  });
});
