// The GitLab CI job template of docs/ci.md, run as a GitLab runner runs a job: the template's variables and
// GitLab's predefined ones (CI_SERVER_HOST, CI_PROJECT_PATH, CI_COMMIT_SHA, CI_COMMIT_BRANCH, CI_JOB_NAME,
// CI_JOB_URL, GITLAB_CI) in the environment, `before_script` then `script` in one bash session that stops at
// the first failing line, the job's result its exit code. Two stand-ins: the uploader's URL is the committed
// file (file://, which curl fetches like https://), and the image's /usr/local/bin is a temporary folder on
// PATH. `npm ci` and `npm test` are real, in a project whose test script writes a JUnit report.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { useServerProcess } from '../support/use-server-process.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/junit');
const ORG = 'gitlab-org';
const TOKEN = 'bootstrap-token-for-the-gitlab-template';
const SHA = 'fedcba9876543210fedcba9876543210fedcba98';

interface Job {
  extends?: string;
  image?: string;
  variables?: Record<string, string>;
  before_script?: string[];
  script?: string[];
}

/** The YAML blocks of docs/ci.md's "GitLab CI" section, parsed and merged into one pipeline. */
function gitlabTemplate(): Record<string, Job> {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/ci.md'), 'utf8');
  const section = doc.slice(
    doc.indexOf('\n## GitLab CI'),
    doc.indexOf('\n## ', doc.indexOf('\n## GitLab CI') + 1),
  );
  const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1] as string));
  return Object.assign({}, ...blocks);
}

/** A job with its `extends` applied (GitLab merges hashes key by key; the job's own keys win). */
function resolve(pipeline: Record<string, Job>, name: string): Job {
  const job = pipeline[name] as Job;
  const base = job.extends === undefined ? {} : resolve(pipeline, job.extends);
  return { ...base, ...job, variables: { ...base.variables, ...job.variables } };
}

describe('the GitLab CI template of docs/ci.md against a real server', () => {
  const pipeline = gitlabTemplate();
  const server = useServerProcess({ org: ORG, token: TOKEN });
  let project: string;
  let bin: string;

  beforeAll(() => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-gitlab-project-'));
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-gitlab-bin-'));
    const test = `mkdir -p reports && cp "$FIXTURE" reports/unit.xml && exit "\${TEST_EXIT:-0}"`;
    fs.writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'app', version: '1.0.0', private: true, scripts: { test } }),
    );
    fs.writeFileSync(
      path.join(project, 'package-lock.json'),
      JSON.stringify({
        name: 'app',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: 'app', version: '1.0.0' } },
      }),
    );
  });
  afterAll(() => {
    fs.rmSync(project, { recursive: true, force: true });
    fs.rmSync(bin, { recursive: true, force: true });
  });

  /** Runs one job of the template; `extra` is what the project sets (its CI/CD variables). */
  function runJob(name: string, extra: Record<string, string>) {
    const job = resolve(pipeline, name);
    const lines = [...(job.before_script ?? []), ...(job.script ?? [])].map((l) =>
      l.replaceAll('/usr/local/bin', bin),
    );
    const env: Record<string, string> = {
      PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: os.homedir(),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      CI: 'true',
      GITLAB_CI: 'true',
      CI_SERVER_HOST: 'gitlab.example.com',
      CI_SERVER_URL: 'https://gitlab.example.com',
      CI_PROJECT_PATH: 'acme/platform/web',
      CI_PROJECT_DIR: project,
      CI_COMMIT_SHA: SHA,
      CI_COMMIT_BRANCH: 'main',
      CI_COMMIT_REF_NAME: 'main',
      CI_PIPELINE_SOURCE: 'push',
      CI_JOB_NAME: name,
      CI_JOB_URL: 'https://gitlab.example.com/acme/platform/web/-/jobs/99',
      ...job.variables,
      MAINLINE_UPLOADER: pathToFileURL(path.join(ROOT, 'packages/uploader/mainline-upload.mjs')).href,
      ...extra,
    };
    return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(
        'bash',
        ['-eo', 'pipefail', '-c', lines.join('\n')],
        { env, cwd: project },
        (error, stdout, stderr) =>
          done({
            code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
            stdout,
            stderr,
          }),
      );
    });
  }

  it('is a node:24 job template that a test job extends', () => {
    expect(pipeline['.mainline']?.image).toBe('node:24');
    expect(pipeline['unit-tests']?.extends).toBe('.mainline');
    expect(pipeline['upload-test-results']?.extends).toBe('.mainline');
  });

  it('unit-tests: a failed test that is not quarantined fails the job; the results land under the GitLab project', async () => {
    const res = await runJob('unit-tests', {
      ...server.clientEnv,
      FIXTURE: path.join(FIXTURES, '09-pytest-single-line.xml'),
      TEST_EXIT: '1',
    });
    expect(res.stderr).toContain('uploaded 1 file for gitlab.example.com/acme/platform/web');
    expect(res.stderr).toContain('failed test(s) not quarantined');
    expect(res.code).toBe(1);
    const repo = await server.post('/v1/repositories/get', {
      repo: { host: 'gitlab.example.com', owner: 'acme/platform', name: 'web' },
      org_url_slug: ORG,
    });
    expect(repo.status).toBe(200);
  });

  it('unit-tests: a passing run passes; upload-test-results sends the reports a test job left', async () => {
    const passing = await runJob('unit-tests', {
      ...server.clientEnv,
      FIXTURE: path.join(FIXTURES, '02-trunk-analytics-cli-googletest-pass-retry.xml'),
    });
    expect(passing.code).toBe(0);
    const upload = await runJob('upload-test-results', {
      ...server.clientEnv,
      CI_JOB_NAME: 'upload-test-results',
    });
    expect(upload.stdout).toContain('uploaded 1 file for gitlab.example.com/acme/platform/web');
    expect(upload.code).toBe(0);
  });
});
