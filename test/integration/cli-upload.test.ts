import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/process.ts';
import { useServerProcess } from '../support/use-server-process.ts';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/junit');
const PASSING = path.join(FIXTURES, '02-trunk-analytics-cli-googletest-pass-retry.xml');
const FAILING = path.join(FIXTURES, '09-pytest-single-line.xml');
const MALFORMED = path.join(FIXTURES, '18-web-test-runner-template-MALFORMED.xml');
const ORG = 'ci-org';
const TOKEN = 'bootstrap-token-for-upload-tests';
const SHA = '0123456789abcdef0123456789abcdef01234567';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A `node -e` script that writes `fixture` as the report (as a test runner would), then exits. */
function runnerThatWrites(fixture: string, report: string, code: number): string[] {
  const script = `require('fs').copyFileSync(${JSON.stringify(fixture)}, ${JSON.stringify(report)}); process.exit(${code})`;
  return ['node', '-e', script];
}

describe('mainline upload and mainline test against a real server', () => {
  const server = useServerProcess({ org: ORG, token: TOKEN });
  let work: string;
  let client: Record<string, string>;

  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-cli-upload-'));
    client = server.clientEnv;
  });
  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  const repoFlags = ['--repo', 'github.com/acme/web', '--branch', 'main', '--sha', SHA];

  it('uploads the files a glob matches, with every flag, and prints the server response with --json', async () => {
    const res = await runCli(
      [
        'upload',
        ...['--junit', path.join(FIXTURES, '0[29]-*.xml')],
        ...['--org', ORG, '--token', TOKEN, '--url', server.url],
        ...repoFlags,
        ...[
          '--pr',
          '12',
          '--variant',
          'linux',
          '--job-name',
          'unit',
          '--job-url',
          'https://ci.example.com/1',
        ],
        '--json',
      ],
      {},
    );
    expect(res.stderr).toContain('uploading 2 JUnit file(s)');
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout);
    expect(body.repo).toEqual({ host: 'github.com', owner: 'acme', name: 'web' });
    expect(body.counts.files).toBe(2);
    expect(body.failed_tests.map((t: { name: string }) => t.name).sort()).toEqual([
      'test_which_fails',
      'test_with_error',
    ]);
    expect(body.all_failures_quarantined).toBe(false);
  });

  it('prints a summary naming the failed tests and each unreadable file with its problem', async () => {
    const res = await runCli(['upload', '--junit', FAILING, '--junit', MALFORMED, ...repoFlags], client);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/uploaded 2 files for github\.com\/acme\/web/);
    expect(res.stdout).toContain('18-web-test-runner-template-MALFORMED.xml: not ingested');
    // Attempts (runs of tests) and failed tests are told apart in words (issue 24).
    expect(res.stdout).toContain('\n4 test attempts: 2 passed, 2 failed, 0 skipped\n');
    expect(res.stdout).toMatch(
      /\n2 tests failed \(each counted once, by its last attempt\), \d of them quarantined:\n/,
    );
    expect(res.stdout).not.toContain('test case');
    expect(res.stdout).toMatch(/error at line \d+/);
    expect(res.stdout).toContain('FAILED');
    expect(res.stdout).toContain('python.test_sample.test_which_fails');
  });

  it('takes the repository, commit and branch from a GitHub Actions environment', async () => {
    const env = {
      ...client,
      GITHUB_ACTIONS: 'true',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'acme/from-actions',
      GITHUB_SHA: SHA,
      GITHUB_REF: 'refs/pull/7/merge',
      GITHUB_HEAD_REF: 'feature/x',
      GITHUB_REF_NAME: '7/merge',
      GITHUB_JOB: 'test',
      GITHUB_RUN_ID: '1234',
      GITHUB_RUN_ATTEMPT: '1',
    };
    const res = await runCli(['upload', '--junit', PASSING, '--json'], env);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).repo).toEqual({ host: 'github.com', owner: 'acme', name: 'from-actions' });
    const get = await server.post('/v1/repositories/get', {
      repo: { host: 'github.com', owner: 'acme', name: 'from-actions' },
    });
    expect(get.status).toBe(200);
  });

  it('answers a second upload with the same --upload-key as a duplicate', async () => {
    const args = ['upload', '--junit', PASSING, ...repoFlags, '--upload-key', 'job-42', '--json'];
    const first = JSON.parse((await runCli(args, client)).stdout);
    const second = JSON.parse((await runCli(args, client)).stdout);
    expect(first.duplicate).toBe(false);
    expect(second).toMatchObject({ duplicate: true, upload_id: first.upload_id });
  });

  it('without --upload-key, sending the same reports again is a duplicate, different reports are not', async () => {
    const args = ['upload', '--junit', PASSING, ...repoFlags, '--sha', 'c0ffee1', '--json'];
    const first = JSON.parse((await runCli(args, client)).stdout);
    const again = JSON.parse((await runCli(args, client)).stdout);
    expect(first.duplicate).toBe(false);
    expect(again).toMatchObject({ duplicate: true, upload_id: first.upload_id });
    const otherCommit = args.map((a) => (a === 'c0ffee1' ? 'c0ffee2' : a));
    expect(JSON.parse((await runCli(otherCommit, client)).stdout).duplicate).toBe(false);
  });

  it('says clearly what is missing or wrong before or instead of uploading', async () => {
    const noToken = await runCli(['upload', '--junit', PASSING, ...repoFlags], { MAINLINE_URL: server.url });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('no API token: pass --token or set MAINLINE_TOKEN');

    const noOrg = await runCli(['upload', '--junit', PASSING, ...repoFlags], { ...client, MAINLINE_ORG: '' });
    expect(noOrg.code).toBe(2);
    expect(noOrg.stderr).toContain('no organization: pass --org <slug> or set MAINLINE_ORG');

    const noFiles = await runCli(
      ['upload', '--junit', path.join(work, 'none/**/*.xml'), ...repoFlags],
      client,
    );
    expect(noFiles.code).toBe(1);
    expect(noFiles.stderr).toContain(`no JUnit files matched "${path.join(work, 'none/**/*.xml')}"`);

    const badToken = await runCli(['upload', '--junit', PASSING, ...repoFlags], {
      ...client,
      MAINLINE_TOKEN: 'nope',
    });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/the server answered 401 INVALID_TOKEN/);

    const otherOrg = await runCli(['upload', '--junit', PASSING, ...repoFlags, '--org', 'globex'], client);
    expect(otherOrg.code).toBe(1);
    expect(otherOrg.stderr).toContain('the server answered 404 ORG_NOT_FOUND');
  });

  it('names the URL when the server cannot be reached', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const res = await runCli(['upload', '--junit', PASSING, ...repoFlags], { ...client, MAINLINE_URL: url });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`cannot reach the server at ${url} (ECONNREFUSED)`);
  });

  it('test: a command that fails while its reports show no failed test keeps its exit code', async () => {
    const report = path.join(work, 'passing.xml');
    const res = await runCli(
      ['test', '--junit', report, ...repoFlags, '--', ...runnerThatWrites(PASSING, report, 3)],
      client,
    );
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('its reports list no failed tests; keeping exit code 3');
  });

  it('test: failed tests that are not quarantined keep the exit code and are named', async () => {
    const report = path.join(work, 'failing.xml');
    const res = await runCli(
      ['test', '--junit', report, ...repoFlags, '--', ...runnerThatWrites(FAILING, report, 1)],
      client,
    );
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('2 failed test(s) not quarantined');
    expect(res.stderr).toContain('test_which_fails');
  });

  it('test: a passing command exits 0 and its results are uploaded', async () => {
    const report = path.join(work, 'green.xml');
    const res = await runCli(
      ['test', '--junit', report, ...repoFlags, '--json', '--', ...runnerThatWrites(PASSING, report, 0)],
      client,
    );
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).counts.files).toBe(1);
  });

  it('test: an unreachable server or a missing token keeps the exit code and says why', async () => {
    const report = path.join(work, 'offline.xml');
    const command = runnerThatWrites(FAILING, report, 4);
    const url = `http://127.0.0.1:${await closedPort()}`;
    const offline = await runCli(['test', '--junit', report, ...repoFlags, '--', ...command], {
      ...client,
      MAINLINE_URL: url,
    });
    expect(offline.code).toBe(4);
    expect(offline.stderr).toContain(`test results not uploaded: cannot reach the server at ${url}`);
    expect(offline.stderr).toContain("keeping the command's exit code 4");

    const noToken = await runCli(['test', '--junit', report, ...repoFlags, '--', ...command], {
      MAINLINE_URL: server.url,
    });
    expect(noToken.code).toBe(4);
    expect(noToken.stderr).toContain('test results not uploaded: no API token');
  });

  it('test: reports left over from an earlier run are not uploaded', async () => {
    const stale = path.join(work, 'stale.xml');
    fs.copyFileSync(FAILING, stale);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(stale, old, old);
    const res = await runCli(
      ['test', '--junit', stale, ...repoFlags, '--', 'node', '-e', 'process.exit(2)'],
      client,
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('leaving out 1 JUnit file(s) not written by this run');
  });

  it('test: a command killed by a signal exits 128 + the signal number', async () => {
    const res = await runCli(
      ['test', '--junit', 'x.xml', ...repoFlags, '--', 'node', '-e', 'process.kill(process.pid, "SIGTERM")'],
      client,
    );
    expect(res.code).toBe(128 + os.constants.signals.SIGTERM);
    expect(res.stderr).toContain('killed by SIGTERM');
  });

  it('test: exits 0 when every failed test is quarantined, and says which', async () => {
    // A failure and a passing retry of the same test on one commit makes it flaky: auto-quarantined.
    const flaky = ['--repo', 'github.com/acme/flaky', '--branch', 'main', '--sha', SHA];
    const FAIL_0100 = path.join(FIXTURES, '01-trunk-analytics-cli-googletest-fail.xml');
    const first = await runCli(
      ['upload', '--junit', FAIL_0100, '--junit', PASSING, ...flaky, '--json'],
      client,
    );
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).failed_tests).toEqual([]);

    const report = path.join(work, 'quarantined.xml');
    const next = ['--repo', 'github.com/acme/flaky', '--branch', 'main', '--sha', SHA.replace(/0/g, 'a')];
    const res = await runCli(
      ['test', '--junit', report, ...next, '--', ...runnerThatWrites(FAIL_0100, report, 1)],
      client,
    );
    expect(res.stderr).toContain(
      'every failed test is quarantined, so this run passes (the command exited with 1)',
    );
    expect(res.stderr).toContain('quarantined: HelloTest.Hello');
    expect(res.code).toBe(0);
  });

  it('test: without a command after -- it is a usage error', async () => {
    const res = await runCli(['test', '--junit', 'x.xml'], client);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('test needs the command to run after --');
  });
});
