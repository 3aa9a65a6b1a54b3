// The GitHub Action (action.yml) run as GitHub runs a composite action: each step's `env` evaluated (only
// `${{ inputs.x }}` expressions, with the inputs' defaults), its `run` script written to a file and run by
// `bash --noprofile --norc -eo pipefail <file>` in GITHUB_WORKSPACE, with the variables a runner sets
// (GITHUB_ACTIONS, GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_REF, GITHUB_EVENT_PATH, GITHUB_ACTION_PATH,
// GITHUB_PATH, RUNNER_TEMP, …), a failed step ending the action with its exit code, and the folders a
// step appends to GITHUB_PATH put on PATH for the later ones. Against a real server on loopback.
// Input names follow trunk-io/analytics-uploader's action.yaml (ee0cebf): org-slug, token,
// junit-paths (comma-separated), run, variant, repo-head-branch.
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { useServerProcess } from '../support/use-server-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/junit');
const FAIL_0100 = '01-trunk-analytics-cli-googletest-fail.xml';
const PASS_RETRY = '02-trunk-analytics-cli-googletest-pass-retry.xml';
const PYTEST_FAIL = '09-pytest-single-line.xml';
const ORG = 'action-org';
const TOKEN = 'bootstrap-token-for-the-github-action';
const SHA = '0123456789abcdef0123456789abcdef01234567';

interface Step {
  name?: string;
  shell?: string;
  env?: Record<string, string>;
  run?: string;
}
interface Action {
  inputs: Record<string, { required?: boolean; default?: string }>;
  runs: { using: string; steps: Step[] };
}

const action = parse(fs.readFileSync(path.join(ROOT, 'action.yml'), 'utf8')) as Action;
const INPUT_EXPRESSION = /^\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}$/;

const runnerTemps: string[] = [];
afterAll(() => {
  for (const temp of runnerTemps) fs.rmSync(temp, { recursive: true, force: true });
});

interface ActionResult {
  code: number;
  stdout: string;
  stderr: string;
  /** PATH as the job's next step would have it. */
  pathAfter: string;
}

function runScript(file: string, env: Record<string, string>, cwd: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'bash',
      ['--noprofile', '--norc', '-eo', 'pipefail', file],
      { env, cwd },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        }),
    );
  });
}

/** Runs the action's steps as a runner would; `jobEnv` is the job's own `env:` (and the runner's PATH). */
async function runAction(
  inputs: Record<string, string>,
  options: { workspace: string; sha?: string; jobEnv?: Record<string, string> },
): Promise<ActionResult> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-runner-temp-'));
  // RUNNER_TEMP lasts the job (its later steps use what the action put there); removed after all tests.
  runnerTemps.push(temp);
  const files = Object.fromEntries(
    ['GITHUB_PATH', 'GITHUB_ENV', 'GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY'].map((k) => {
      const file = path.join(temp, `${k.toLowerCase()}_${randomUUID()}`);
      fs.writeFileSync(file, '');
      return [k, file];
    }),
  );
  const sha = options.sha ?? SHA;
  const event = path.join(temp, 'event.json');
  fs.writeFileSync(event, JSON.stringify({ ref: 'refs/heads/main', after: sha, head_commit: { id: sha } }));
  const runner: Record<string, string> = {
    PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: os.homedir(),
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_REPOSITORY: 'acme/web',
    GITHUB_REPOSITORY_OWNER: 'acme',
    GITHUB_SHA: sha,
    GITHUB_REF: 'refs/heads/main',
    GITHUB_REF_NAME: 'main',
    GITHUB_REF_TYPE: 'branch',
    GITHUB_EVENT_NAME: 'push',
    GITHUB_EVENT_PATH: event,
    GITHUB_WORKFLOW: 'CI',
    GITHUB_JOB: 'test',
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_NUMBER: '7',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_ACTOR: 'ada',
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_ACTION: '__acme_mainline',
    GITHUB_ACTION_PATH: ROOT,
    RUNNER_OS: 'Linux',
    RUNNER_TEMP: temp,
    ...files,
    ...options.jobEnv,
  };
  const values = (name: string): string => {
    if (!Object.hasOwn(action.inputs, name)) throw new Error(`action.yml has no input "${name}"`);
    return inputs[name] ?? action.inputs[name]?.default ?? '';
  };
  for (const name of Object.keys(inputs)) values(name);
  let stdout = '';
  let stderr = '';
  let code = 0;
  const added: string[] = [];
  for (const step of action.runs.steps) {
    const env: Record<string, string> = { ...runner, PATH: [...added, runner['PATH']].join(':') };
    for (const [key, expression] of Object.entries(step.env ?? {})) {
      const input = INPUT_EXPRESSION.exec(expression)?.[1];
      if (input === undefined) throw new Error(`this harness evaluates only \${{ inputs.x }}: ${expression}`);
      env[key] = values(input);
    }
    const script = path.join(temp, `${randomUUID()}.sh`);
    fs.writeFileSync(script, step.run ?? '');
    const result = await runScript(script, env, options.workspace);
    stdout += result.stdout;
    stderr += result.stderr;
    added.unshift(
      ...fs
        .readFileSync(files['GITHUB_PATH'] as string, 'utf8')
        .split('\n')
        .filter((l) => l !== '' && !added.includes(l))
        .reverse(),
    );
    if (result.code !== 0) {
      code = result.code;
      break;
    }
  }
  return { code, stdout, stderr, pathAfter: [...added, runner['PATH']].join(':') };
}

describe('the action.yml file', () => {
  it('is a composite action of bash steps whose scripts see the inputs only as environment variables', () => {
    expect(action.runs.using).toBe('composite');
    expect(action.runs.steps.length).toBeGreaterThan(0);
    const used = new Set<string>();
    for (const step of action.runs.steps) {
      // Anything else (uses:, if:, working-directory:) this test would not run: extend the harness first.
      expect(Object.keys(step).every((k) => ['name', 'shell', 'env', 'run'].includes(k))).toBe(true);
      expect(step.shell).toBe('bash');
      // ${{ }} in a script is pasted into it before bash reads it: an input could inject commands.
      expect(step.run).not.toContain('${{');
      for (const expression of Object.values(step.env ?? {})) {
        const input = INPUT_EXPRESSION.exec(expression)?.[1];
        expect(input, expression).toBeDefined();
        expect(Object.keys(action.inputs)).toContain(input);
        used.add(input as string);
      }
    }
    expect([...used].sort()).toEqual(Object.keys(action.inputs).sort());
  });

  it('runs the committed uploader, which is what the sources make now (else: npm run build, commit it)', async () => {
    const check = await new Promise<{ code: number; out: string }>((resolve) => {
      execFile(
        process.execPath,
        [path.join(ROOT, 'scripts/bundle-uploader.mjs'), '--check'],
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : 1, out: stdout + stderr }),
      );
    });
    expect(check.out).toContain('is up to date');
    expect(check.code).toBe(0);
  });
});

describe('the GitHub Action against a real server', () => {
  const server = useServerProcess({ org: ORG, token: TOKEN });
  let workspace: string;
  let connection: Record<string, string>;

  beforeAll(() => {
    connection = { url: server.url, token: TOKEN, 'org-slug': ORG };
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-action-workspace-'));
    fs.mkdirSync(path.join(workspace, 'reports'));
    fs.mkdirSync(path.join(workspace, 'app', 'reports'), { recursive: true });
  });
  afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));

  async function api(
    route: string,
    body: unknown,
  ): Promise<{ status: number; json: { tests?: { name: string }[] } }> {
    const res = await server.post(route, body);
    return { status: res.status, json: (await res.json()) as { tests?: { name: string }[] } };
  }

  async function failingTestNames(repo: { host: string; owner: string; name: string }): Promise<string[]> {
    const now = Date.now();
    const res = await api('/v1/flaky-tests/list-failing-tests', {
      repo,
      org_url_slug: ORG,
      start_time: new Date(now - 3_600_000).toISOString(),
      end_time: new Date(now + 60_000).toISOString(),
      page_query: { page_size: 100 },
    });
    expect(res.status).toBe(200);
    return (res.json.tests ?? []).map((t) => t.name).sort();
  }

  it('uploads the files junit-paths names (commas and new lines) for the workflow’s repository', async () => {
    fs.copyFileSync(path.join(FIXTURES, PYTEST_FAIL), path.join(workspace, 'reports', 'pytest.xml'));
    fs.copyFileSync(path.join(FIXTURES, PASS_RETRY), path.join(workspace, 'reports', 'gtest.xml'));
    const res = await runAction(
      { ...connection, 'junit-paths': 'reports/py*.xml,\n  reports/gtest.xml\n' },
      { workspace },
    );
    expect(res.stderr).toContain('uploading 2 JUnit file(s)');
    expect(res.stdout).toMatch(/mainline-upload \d+\.\d+\.\d+ with Node v\d+/);
    expect(res.stdout).toContain(`uploaded 2 files for github.com/acme/web to ${server.url}`);
    expect(res.code).toBe(0);
    const repo = await api('/v1/repositories/get', {
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
      org_url_slug: ORG,
    });
    expect(repo.status).toBe(200);
    expect(await failingTestNames({ host: 'github.com', owner: 'acme', name: 'web' })).toContain(
      'test_which_fails',
    );
  });

  it('puts mainline-upload on PATH for the job’s later steps', async () => {
    const res = await runAction(
      { ...connection, 'junit-paths': 'reports/gtest.xml', repo: 'github.com/acme/path-check' },
      { workspace },
    );
    expect(res.code).toBe(0);
    const version = await new Promise<string>((resolve, reject) =>
      execFile('mainline-upload', ['--version'], { env: { PATH: res.pathAfter } }, (error, stdout) =>
        error === null ? resolve(stdout.trim()) : reject(error),
      ),
    );
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/uploader/package.json'), 'utf8'));
    expect(version).toBe(pkg.version);
  });

  it('takes the server, token and organization from the job’s MAINLINE_* variables when the inputs are empty', async () => {
    const res = await runAction(
      { 'junit-paths': 'reports/gtest.xml', repo: 'github.com/acme/from-env' },
      {
        workspace,
        jobEnv: server.clientEnv,
      },
    );
    expect(res.stdout).toContain(`uploaded 1 file for github.com/acme/from-env`);
    expect(res.code).toBe(0);
  });

  it('refuses to start without a token, saying which input to set', async () => {
    const res = await runAction(
      { url: server.url, 'org-slug': ORG, 'junit-paths': 'reports/gtest.xml' },
      { workspace },
    );
    expect(res.stdout).toContain('::error title=Mainline::set the token input (or MAINLINE_TOKEN)');
    expect(res.code).toBe(2);
  });

  it('repo-head-branch and variant reach the upload (a different branch is not a repeat of the same upload)', async () => {
    const inputs = { ...connection, 'junit-paths': 'reports/gtest.xml', repo: 'github.com/acme/branches' };
    const onMain = await runAction(inputs, { workspace });
    expect(onMain.stdout).toContain('uploaded 1 file for github.com/acme/branches');
    const again = await runAction(inputs, { workspace });
    expect(again.stdout).toContain('already uploaded with this upload key');
    const feature = await runAction({ ...inputs, 'repo-head-branch': 'feature-x' }, { workspace });
    expect(feature.stdout).toContain('uploaded 1 file for github.com/acme/branches');
    const windows = await runAction(
      { ...inputs, 'repo-head-branch': 'feature-x', variant: 'windows' },
      { workspace },
    );
    expect(windows.stdout).toContain('uploaded 1 file for github.com/acme/branches');
    const featureAgain = await runAction({ ...inputs, 'repo-head-branch': 'feature-x' }, { workspace });
    expect(featureAgain.stdout).toContain('already uploaded with this upload key');
    expect([onMain, again, feature, windows, featureAgain].map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
  });

  const runInputs = (run: string) => ({
    ...connection,
    repo: 'github.com/acme/flaky',
    'working-directory': 'app',
    'junit-paths': 'reports/*.xml',
    run,
  });
  const writes = (fixture: string, code: number) =>
    `cp "$FIXTURES/${fixture}" reports/unit.xml; echo "token:\${MAINLINE_TOKEN-unset}:\${INPUT_TOKEN-unset}" > seen.txt; exit ${code}`;

  it('run: a failed test that is not quarantined fails the step with the command’s exit code; the command never sees the token', async () => {
    const res = await runAction(runInputs(writes(PYTEST_FAIL, 3)), {
      workspace,
      jobEnv: { FIXTURES, MAINLINE_TOKEN: TOKEN },
    });
    expect(res.stderr).toContain('failed test(s) not quarantined');
    expect(res.code).toBe(3);
    expect(fs.readFileSync(path.join(workspace, 'app', 'seen.txt'), 'utf8').trim()).toBe('token:unset:unset');
    expect(await failingTestNames({ host: 'github.com', owner: 'acme', name: 'flaky' })).toContain(
      'test_which_fails',
    );
  });

  it('run: a command whose failed tests are all quarantined passes the step', async () => {
    // A failure and a passing retry of HelloTest.Hello on one commit make it flaky: auto-quarantined.
    const seed = path.join(workspace, 'app', 'reports');
    fs.rmSync(seed, { recursive: true, force: true });
    fs.mkdirSync(seed);
    fs.copyFileSync(path.join(FIXTURES, FAIL_0100), path.join(seed, 'fail.xml'));
    fs.copyFileSync(path.join(FIXTURES, PASS_RETRY), path.join(seed, 'retry.xml'));
    const first = await runAction(
      { ...runInputs(''), 'junit-paths': 'reports/fail.xml, reports/retry.xml' },
      { workspace, sha: SHA.replace(/1/g, 'b') },
    );
    expect(first.code).toBe(0);
    fs.rmSync(seed, { recursive: true, force: true });
    fs.mkdirSync(seed);

    const res = await runAction(runInputs(writes(FAIL_0100, 1)), {
      workspace,
      sha: SHA.replace(/0/g, 'a'),
      jobEnv: { FIXTURES },
    });
    expect(res.stderr).toContain(
      'every failed test is quarantined, so this run passes (the command exited with 1)',
    );
    expect(res.stderr).toContain('quarantined: HelloTest.Hello');
    expect(res.code).toBe(0);
  });

  it('run: a passing command passes, and a command that writes no report keeps its exit code', async () => {
    const green = await runAction(runInputs(writes(PASS_RETRY, 0)), { workspace, jobEnv: { FIXTURES } });
    expect(green.code).toBe(0);
    fs.rmSync(path.join(workspace, 'app', 'reports', 'unit.xml'));
    const broken = await runAction(runInputs('echo "cannot compile" >&2; exit 2'), {
      workspace,
      jobEnv: { FIXTURES },
    });
    expect(broken.stderr).toContain('cannot compile');
    expect(broken.stderr).toContain("keeping the command's exit code 2");
    expect(broken.code).toBe(2);
  });

  // GitHub's runner images have had Node 20 as their `node`; the uploader is built for Node 20 and later.
  const node20 =
    fs.existsSync('/usr/bin/node') &&
    execFileSync('/usr/bin/node', ['--version'], { encoding: 'utf8' }).startsWith('v20.');
  it.skipIf(!node20)('runs with a runner’s Node 20 (/usr/bin/node here)', async () => {
    const res = await runAction(
      { ...connection, 'junit-paths': 'reports/gtest.xml', repo: 'github.com/acme/node20' },
      { workspace, jobEnv: { PATH: '/usr/bin:/bin' } },
    );
    expect(res.stdout).toContain('with Node v20.');
    expect(res.stdout).toContain('uploaded 1 file for github.com/acme/node20');
    expect(res.code).toBe(0);
  });

  it('stops with a message when the runner’s Node is older than 20', async () => {
    const fake = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-old-node-'));
    fs.writeFileSync(
      path.join(fake, 'node'),
      '#!/bin/sh\ncase "$1" in --version) echo v18.20.0;; *) echo 18;; esac\n',
      { mode: 0o755 },
    );
    try {
      const res = await runAction(
        { ...connection, 'junit-paths': 'reports/gtest.xml' },
        { workspace, jobEnv: { PATH: `${fake}:/usr/bin:/bin` } },
      );
      expect(res.stdout).toContain('mainline-upload needs Node 20 or later, this runner has v18.20.0');
      expect(res.code).toBe(1);
    } finally {
      fs.rmSync(fake, { recursive: true, force: true });
    }
  });
});
