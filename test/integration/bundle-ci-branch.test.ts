// A bundle from trunk-analytics-cli on a CI pull-request job, through createBundleUpload and the PUT:
// git's checkout is the PR's merge ref (repo_head_branch "refs/remotes/pull/42/merge") while the envs
// it sends name the PR's branch. The upload is stored under that branch and PR, never "42/merge", and
// the dashboard's failure samples show it.
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { signIn } from '../support/dashboard.ts';
import { uploadOf } from '../support/reads.ts';
import { putBundle, tenantBundle } from '../support/seed.ts';
import { junitXml } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const MERGE_REF = 'refs/remotes/pull/42/merge';

describe('a CI pull-request bundle is stored under the PR’s branch, from the envs the CLI sends', () => {
  const t = useTestApp();
  let cookie: string;

  beforeAll(async () => {
    cookie = await signIn(t, t.orgToken);
  });

  /** PUTs a bundle whose git branch is the merge ref, with these envs; answers the stored upload row. */
  async function send(testName: string, sha: string, envs: Record<string, string>) {
    const created = await t.post(
      '/v1/metrics/createBundleUpload',
      { repo: REPO, orgUrlSlug: 'acme' },
      t.orgToken,
    );
    expect(created.statusCode, created.body).toBe(200);
    const bundle = await tenantBundle(REPO, [junitXml([{ name: testName, fail: 'boom' }])], {
      repo: {
        repo: REPO,
        repo_url: 'https://github.com/acme/web.git',
        repo_head_sha: sha,
        repo_head_branch: MERGE_REF,
      },
      envs,
    });
    const res = await putBundle(t, created.json().url, bundle);
    return res;
  }

  it.each([
    [
      'GitHub Actions',
      { GITHUB_ACTIONS: 'true', GITHUB_REF: 'refs/pull/42/merge', GITHUB_HEAD_REF: 'feature/login' },
    ],
    [
      'GitLab CI',
      {
        GITLAB_CI: 'true',
        CI_COMMIT_REF_NAME: 'feature/login',
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/login',
        CI_MERGE_REQUEST_IID: '42',
      },
    ],
    ['Buildkite', { BUILDKITE: 'true', BUILDKITE_BRANCH: 'feature/login', BUILDKITE_PULL_REQUEST: '42' }],
    [
      'CircleCI',
      {
        CIRCLECI: 'true',
        CIRCLE_BRANCH: 'feature/login',
        CIRCLE_PULL_REQUEST: 'https://github.com/acme/web/pull/42',
      },
    ],
    ['Jenkins', { JENKINS_URL: 'https://ci.example.com/', CHANGE_BRANCH: 'feature/login', CHANGE_ID: '42' }],
    [
      'Azure Pipelines',
      {
        TF_BUILD: 'True',
        BUILD_SOURCEBRANCH: 'refs/pull/42/merge',
        SYSTEM_PULLREQUEST_SOURCEBRANCH: 'refs/heads/feature/login',
      },
    ],
    [
      'Bitbucket Pipelines',
      { BITBUCKET_BUILD_NUMBER: '7', BITBUCKET_BRANCH: 'feature/login', BITBUCKET_PR_ID: '42' },
    ],
  ])('%s', async (ci, envs) => {
    const sha = `sha-${ci.replace(/\W/g, '').toLowerCase()}`;
    const testName = `test_${ci.replace(/\W/g, '_').toLowerCase()}`;
    const res = await send(testName, sha, envs);
    expect(res.statusCode, res.body).toBe(200);
    expect(await uploadOf(t, sha)).toMatchObject({ branch: 'feature/login', pr_number: 42 });
    // What the dashboard shows of the failure: the PR's branch and number.
    const id = res.json().failed_tests[0].test_case_id as string;
    const page = await t.app.inject({
      method: 'GET',
      url: `/acme/repos/github.com/acme/web/tests/${id}`,
      headers: { cookie },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/ · feature\/login @ <span class="mono">[^<]*<\/span> · PR #42/);
    expect(page.body).not.toContain('42/merge');
  });

  it('stores a PR whose branch nobody named under pull/<n> and says how to name it (Azure, analytics-cli)', async () => {
    // analytics-cli on Azure Pipelines sends BUILD_SOURCEBRANCH (the merge ref) and no source-branch
    // variable; refusing the bundle would fail the user's CI step, so it is kept under pull/42.
    const res = await send('test_azure_plain', 'sha-azure-plain', {
      TF_BUILD: 'True',
      BUILD_SOURCEBRANCH: 'refs/pull/42/merge',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await uploadOf(t, 'sha-azure-plain')).toMatchObject({ branch: 'pull/42', pr_number: 42 });
    expect(JSON.stringify(res.json())).toMatch(/pull request 42.*--repo-head-branch/);
  });
});
