import { describe, expect, it } from 'vitest';
import {
  branchName,
  type CiContext,
  detectCi,
  type Env,
  type GitRunner,
  parseGitRemote,
  pullRequestOfRef,
} from '../../src/domain/ci-env.ts';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const OTHER_SHA = 'fedcba9876543210fedcba9876543210fedcba98';

type Case = [title: string, env: Env, expected: CiContext];

function table(cases: Case[]) {
  it.each(cases)('%s', (_title, env, expected) => {
    expect(detectCi(env)).toEqual(expected);
  });
}

describe('parseGitRemote', () => {
  it.each([
    ['https://github.com/acme/web.git', 'github.com', 'acme', 'web'],
    ['https://github.com/acme/web', 'github.com', 'acme', 'web'],
    ['https://x-access-token:secret@github.com/acme/web.git', 'github.com', 'acme', 'web'],
    [
      'https://GitLab.Example.com:8443/group/sub/deeper/app.git',
      'gitlab.example.com',
      'group/sub/deeper',
      'app',
    ],
    ['http://git.internal/acme/web/', 'git.internal', 'acme', 'web'],
    ['git@github.com:acme/web.git', 'github.com', 'acme', 'web'],
    ['git@gitlab.com:group/sub/app.git', 'gitlab.com', 'group/sub', 'app'],
    ['ssh://git@git.example.com:2222/acme/web.git', 'git.example.com', 'acme', 'web'],
    ['ssh://git.example.com/acme/web', 'git.example.com', 'acme', 'web'],
    ['git://github.com/acme/web.git', 'github.com', 'acme', 'web'],
  ])('%s', (url, host, owner, name) => {
    expect(parseGitRemote(url)).toEqual({ host, owner, name });
  });

  it.each(['', 'web', 'https://github.com/web', '/srv/git/web.git', 'git@github.com:web.git'])(
    'says nothing for %j',
    (url) => {
      expect(parseGitRemote(url)).toBeUndefined();
    },
  );
});

describe('detectCi: GitHub Actions', () => {
  const base = {
    GITHUB_ACTIONS: 'true',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_REPOSITORY: 'acme/web',
    GITHUB_SHA: SHA,
    GITHUB_JOB: 'test',
    GITHUB_RUN_ID: '987654',
    GITHUB_RUN_ATTEMPT: '2',
  };
  const common = {
    provider: 'github',
    repo: { host: 'github.com', owner: 'acme', name: 'web' },
    commitSha: SHA,
    jobName: 'test',
    jobUrl: 'https://github.com/acme/web/actions/runs/987654',
    runAttempt: 2,
  } as const;
  table([
    [
      'a push builds GITHUB_REF_NAME',
      { ...base, GITHUB_REF: 'refs/heads/main', GITHUB_REF_NAME: 'main', GITHUB_HEAD_REF: '' },
      { ...common, branch: 'main' },
    ],
    [
      'a pull request takes its branch from GITHUB_HEAD_REF and its number from GITHUB_REF',
      {
        ...base,
        GITHUB_REF: 'refs/pull/42/merge',
        GITHUB_REF_NAME: '42/merge',
        GITHUB_HEAD_REF: 'feature/x',
      },
      { ...common, branch: 'feature/x', prNumber: 42 },
    ],
    [
      // trunk-analytics-cli sends GITHUB_REF and GITHUB_HEAD_REF but not GITHUB_REF_NAME.
      'a pull request as the analytics CLI sends it: never the merge ref',
      { ...base, GITHUB_REF: 'refs/pull/42/merge', GITHUB_HEAD_REF: 'feature/login' },
      { ...common, branch: 'feature/login', prNumber: 42 },
    ],
    [
      'a push as the analytics CLI sends it: the branch from GITHUB_REF',
      { ...base, GITHUB_REF: 'refs/heads/release/1.2' },
      { ...common, branch: 'release/1.2' },
    ],
    [
      'a pull request without GITHUB_HEAD_REF names no branch rather than "42/merge"',
      { ...base, GITHUB_REF: 'refs/pull/42/merge', GITHUB_REF_NAME: '42/merge' },
      { ...common, prNumber: 42 },
    ],
    [
      "TRUNK_PR_NUMBER (the CLI's --pr-number) wins",
      { ...base, GITHUB_REF: 'refs/heads/main', TRUNK_PR_NUMBER: '77' },
      { ...common, branch: 'main', prNumber: 77 },
    ],
    [
      'GitHub Enterprise Server: the host comes from GITHUB_SERVER_URL',
      { ...base, GITHUB_SERVER_URL: 'https://ghe.example.com/', GITHUB_REF_NAME: 'main' },
      {
        ...common,
        repo: { host: 'ghe.example.com', owner: 'acme', name: 'web' },
        branch: 'main',
        jobUrl: 'https://ghe.example.com/acme/web/actions/runs/987654',
      },
    ],
  ]);

  it('reads the pull request title and head commit from the event file when given a reader', () => {
    const event = { pull_request: { number: 7, title: 'Fix the thing', head: { sha: OTHER_SHA } } };
    const env = {
      ...base,
      GITHUB_EVENT_PATH: '/tmp/event.json',
      GITHUB_HEAD_REF: 'fix',
      GITHUB_REF: 'refs/pull/7/merge',
    };
    const files: Record<string, string> = { '/tmp/event.json': JSON.stringify(event) };
    const ctx = detectCi(env, { readFile: (p) => files[p] });
    expect(ctx).toMatchObject({ prNumber: 7, prTitle: 'Fix the thing', commitSha: OTHER_SHA, branch: 'fix' });
  });

  it('ignores an event file that is not JSON', () => {
    const env = { ...base, GITHUB_EVENT_PATH: '/tmp/event.json', GITHUB_REF_NAME: 'main' };
    expect(detectCi(env, { readFile: () => '{not json' })).toEqual({ ...common, branch: 'main' });
  });
});

describe('detectCi: GitLab CI', () => {
  const base = {
    GITLAB_CI: 'true',
    CI_SERVER_HOST: 'gitlab.example.com',
    CI_PROJECT_PATH: 'platform/backend/api',
    CI_COMMIT_SHA: SHA,
    CI_COMMIT_REF_NAME: 'main',
    CI_COMMIT_BRANCH: 'main',
    CI_JOB_NAME: 'rspec 1/4',
    CI_JOB_URL: 'https://gitlab.example.com/platform/backend/api/-/jobs/555',
  };
  const common = {
    provider: 'gitlab',
    repo: { host: 'gitlab.example.com', owner: 'platform/backend', name: 'api' },
    commitSha: SHA,
    jobName: 'rspec 1/4',
    jobUrl: 'https://gitlab.example.com/platform/backend/api/-/jobs/555',
  } as const;
  table([
    ['a branch pipeline; subgroups stay in the owner', base, { ...common, branch: 'main' }],
    [
      'a merge request pipeline',
      {
        ...base,
        CI_COMMIT_BRANCH: '',
        CI_COMMIT_REF_NAME: 'refs/merge-requests/12/head',
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/login',
        CI_MERGE_REQUEST_IID: '12',
        CI_MERGE_REQUEST_TITLE: 'Add login',
      },
      { ...common, branch: 'feature/login', prNumber: 12, prTitle: 'Add login' },
    ],
    [
      'a merged-results pipeline reports the source branch head, not the merge commit',
      {
        ...base,
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/login',
        CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: OTHER_SHA,
        CI_MERGE_REQUEST_IID: '12',
      },
      { ...common, branch: 'feature/login', prNumber: 12, commitSha: OTHER_SHA },
    ],
    [
      'a merge request ref is no branch; its number comes from CI_MERGE_REQUEST_REF_PATH',
      {
        ...base,
        CI_COMMIT_BRANCH: '',
        CI_COMMIT_REF_NAME: 'refs/merge-requests/12/head',
        CI_MERGE_REQUEST_REF_PATH: 'refs/merge-requests/12/head',
      },
      { ...common, prNumber: 12 },
    ],
    [
      'an external (GitHub) pull request pipeline',
      {
        ...base,
        CI_COMMIT_BRANCH: '',
        CI_COMMIT_REF_NAME: 'feature/ext',
        CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME: 'feature/ext',
        CI_EXTERNAL_PULL_REQUEST_IID: '31',
      },
      { ...common, branch: 'feature/ext', prNumber: 31 },
    ],
  ]);
});

describe('detectCi: Buildkite', () => {
  const base = {
    BUILDKITE: 'true',
    BUILDKITE_REPO: 'git@github.com:acme/web.git',
    BUILDKITE_COMMIT: SHA,
    BUILDKITE_BRANCH: 'main',
    BUILDKITE_PULL_REQUEST: 'false',
    BUILDKITE_LABEL: ':jest: unit',
    BUILDKITE_BUILD_URL: 'https://buildkite.com/acme/web/builds/77',
    BUILDKITE_JOB_ID: 'e44f9784-e20e-4b93-a21d-f41fd5869db9',
    BUILDKITE_RETRY_COUNT: '0',
  };
  const common = {
    provider: 'buildkite',
    repo: { host: 'github.com', owner: 'acme', name: 'web' },
    commitSha: SHA,
    branch: 'main',
    jobName: ':jest: unit',
    jobUrl: 'https://buildkite.com/acme/web/builds/77#e44f9784-e20e-4b93-a21d-f41fd5869db9',
    runAttempt: 0,
  } as const;
  table([
    ['a branch build over ssh: "false" means no pull request', base, common],
    [
      'a pull request build over https, retried once',
      {
        ...base,
        BUILDKITE_REPO: 'https://github.com/acme/web.git',
        BUILDKITE_BRANCH: 'fix',
        BUILDKITE_PULL_REQUEST: '123',
        BUILDKITE_RETRY_COUNT: '1',
      },
      { ...common, branch: 'fix', prNumber: 123, runAttempt: 1 },
    ],
    [
      "the CLI's TRUNK_PR_NUMBER over BUILDKITE_PULL_REQUEST",
      { ...base, BUILDKITE_PULL_REQUEST: '123', TRUNK_PR_NUMBER: '124' },
      { ...common, prNumber: 124 },
    ],
    [
      'a build of "HEAD" leaves the commit to git',
      { ...base, BUILDKITE_COMMIT: 'HEAD', BUILDKITE_JOB_ID: '' },
      (({ commitSha: _sha, ...rest }) => ({ ...rest, jobUrl: 'https://buildkite.com/acme/web/builds/77' }))(
        common,
      ),
    ],
  ]);
});

describe('detectCi: CircleCI', () => {
  const base = {
    CIRCLECI: 'true',
    CIRCLE_REPOSITORY_URL: 'git@github.com:acme/web.git',
    CIRCLE_PROJECT_USERNAME: 'acme',
    CIRCLE_PROJECT_REPONAME: 'web',
    CIRCLE_SHA1: SHA,
    CIRCLE_BRANCH: 'feature',
    CIRCLE_JOB: 'build-and-test',
    CIRCLE_BUILD_URL: 'https://circleci.com/gh/acme/web/321',
  };
  const common = {
    provider: 'circleci',
    repo: { host: 'github.com', owner: 'acme', name: 'web' },
    commitSha: SHA,
    branch: 'feature',
    jobName: 'build-and-test',
    jobUrl: 'https://circleci.com/gh/acme/web/321',
  } as const;
  table([
    ['a branch build', base, common],
    [
      'the pull request number comes from CIRCLE_PULL_REQUEST',
      { ...base, CIRCLE_PULL_REQUEST: 'https://github.com/acme/web/pull/99' },
      { ...common, prNumber: 99 },
    ],
    [
      'a pull request from a fork builds "pull/123": its number, and no branch',
      { ...base, CIRCLE_BRANCH: 'pull/123', CIRCLE_PR_NUMBER: '' },
      (({ branch: _b, ...rest }) => ({ ...rest, prNumber: 123 }))(common),
    ],
    [
      'without CIRCLE_REPOSITORY_URL the project user and name on github.com',
      { ...base, CIRCLE_REPOSITORY_URL: '' },
      common,
    ],
    [
      'a Bitbucket repository URL',
      { ...base, CIRCLE_REPOSITORY_URL: 'git@bitbucket.org:acme/web.git' },
      { ...common, repo: { host: 'bitbucket.org', owner: 'acme', name: 'web' } },
    ],
  ]);
});

describe('detectCi: Jenkins', () => {
  const base = {
    JENKINS_URL: 'https://ci.example.com/',
    GIT_URL: 'https://github.com/acme/web.git',
    GIT_COMMIT: SHA,
    GIT_BRANCH: 'origin/main',
    JOB_NAME: 'web/main',
    BUILD_URL: 'https://ci.example.com/job/web/job/main/12/',
  };
  const common = {
    provider: 'jenkins',
    repo: { host: 'github.com', owner: 'acme', name: 'web' },
    commitSha: SHA,
    jobName: 'web/main',
    jobUrl: 'https://ci.example.com/job/web/job/main/12/',
  } as const;
  table([
    ['a freestyle job: origin/ is dropped from GIT_BRANCH', base, { ...common, branch: 'main' }],
    [
      'a multibranch pull request: CHANGE_BRANCH, CHANGE_ID and CHANGE_TITLE',
      { ...base, BRANCH_NAME: 'PR-8', CHANGE_BRANCH: 'feature/a', CHANGE_ID: '8', CHANGE_TITLE: 'Feature A' },
      { ...common, branch: 'feature/a', prNumber: 8, prTitle: 'Feature A' },
    ],
    [
      'refs/remotes/origin/ and refs/heads/ are dropped from GIT_BRANCH',
      { ...base, GIT_BRANCH: 'refs/remotes/origin/feature/b' },
      { ...common, branch: 'feature/b' },
    ],
    [
      'a multibranch branch build: BRANCH_NAME',
      { ...base, BRANCH_NAME: 'release/1.2', GIT_BRANCH: 'origin/release/1.2' },
      { ...common, branch: 'release/1.2' },
    ],
  ]);
});

describe('detectCi: Azure Pipelines', () => {
  // The variables trunk-analytics-cli sends from Azure (no SYSTEM_PULLREQUEST_* among them).
  const base = {
    TF_BUILD: 'True',
    BUILD_REPOSITORY_URI: 'https://acme@dev.azure.com/acme/platform/_git/web',
    BUILD_SOURCEVERSION: SHA,
    BUILD_SOURCEBRANCH: 'refs/heads/main',
    BUILD_SOURCEBRANCHNAME: 'main',
    BUILD_DEFINITIONNAME: 'web-ci',
    BUILD_BUILDID: '4711',
    SYSTEM_TEAMFOUNDATIONCOLLECTIONURI: 'https://dev.azure.com/acme/',
  };
  const common = {
    provider: 'azure',
    repo: { host: 'dev.azure.com', owner: 'acme/platform', name: 'web' },
    commitSha: SHA,
    jobName: 'web-ci',
  } as const;
  table([
    ['a branch build; "_git" is no part of the owner', base, { ...common, branch: 'main' }],
    [
      'a pull request as the analytics CLI sends it: the number from the merge ref, no branch',
      { ...base, BUILD_SOURCEBRANCH: 'refs/pull/42/merge', BUILD_SOURCEBRANCHNAME: 'merge' },
      { ...common, prNumber: 42 },
    ],
    [
      'a pull request with the System.PullRequest variables (a GitHub repository)',
      {
        ...base,
        BUILD_REPOSITORY_URI: 'https://github.com/acme/web',
        BUILD_SOURCEBRANCH: 'refs/pull/42/merge',
        SYSTEM_PULLREQUEST_SOURCEBRANCH: 'refs/heads/feature/login',
        SYSTEM_PULLREQUEST_PULLREQUESTNUMBER: '42',
        SYSTEM_TEAMPROJECT: 'web',
      },
      {
        ...common,
        repo: { host: 'github.com', owner: 'acme', name: 'web' },
        branch: 'feature/login',
        prNumber: 42,
        jobUrl: 'https://dev.azure.com/acme/web/_build/results?buildId=4711',
      },
    ],
  ]);
});

describe('detectCi: Bitbucket Pipelines', () => {
  const base = {
    BITBUCKET_BUILD_NUMBER: '88',
    BITBUCKET_GIT_HTTP_ORIGIN: 'http://bitbucket.org/acme/web',
    BITBUCKET_REPO_FULL_NAME: 'acme/web',
    BITBUCKET_COMMIT: SHA,
    BITBUCKET_BRANCH: 'main',
  };
  const common = {
    provider: 'bitbucket',
    repo: { host: 'bitbucket.org', owner: 'acme', name: 'web' },
    commitSha: SHA,
    jobUrl: 'https://bitbucket.org/acme/web/pipelines/results/88',
  } as const;
  table([
    ['a branch build', base, { ...common, branch: 'main' }],
    [
      'a pull request build: BITBUCKET_BRANCH is the source branch, BITBUCKET_PR_ID its number',
      { ...base, BITBUCKET_BRANCH: 'feature/login', BITBUCKET_PR_ID: '5' },
      { ...common, branch: 'feature/login', prNumber: 5 },
    ],
    [
      'without the origin URL, the full name on bitbucket.org',
      { ...base, BITBUCKET_GIT_HTTP_ORIGIN: '' },
      { ...common, branch: 'main' },
    ],
  ]);
});

describe('merge refs are no branches', () => {
  it.each([
    ['refs/pull/42/merge', 42],
    ['refs/remotes/pull/42/merge', 42],
    ['refs/pull/42/head', 42],
    ['42/merge', 42],
    ['refs/merge-requests/12/head', 12],
    ['pull/123', 123],
  ])('%s names pull request %d and no branch', (ref, pr) => {
    expect(pullRequestOfRef(ref)).toBe(pr);
    expect(branchName(ref)).toBeUndefined();
  });

  it.each([
    ['refs/heads/main', 'main'],
    ['refs/remotes/origin/feature/x', 'feature/x'],
    ['release/1.2', 'release/1.2'],
    ['pull-requests-dashboard', 'pull-requests-dashboard'],
    ['feature/42', 'feature/42'],
  ])('%s is the branch %s', (ref, branch) => {
    expect(branchName(ref)).toBe(branch);
    expect(pullRequestOfRef(ref)).toBeUndefined();
  });
});

describe('detectCi: outside CI', () => {
  const checkout: Record<string, string> = {
    'remote get-url origin': 'git@github.com:acme/web.git',
    'rev-parse HEAD': SHA,
    'rev-parse --abbrev-ref HEAD': 'my-branch',
  };
  const git: GitRunner = (args) => checkout[args.join(' ')];

  it('with no git at hand, knows nothing but that it is local', () => {
    expect(detectCi({})).toEqual({ provider: 'local' });
  });

  it('asks git for the origin remote, HEAD and the current branch', () => {
    expect(detectCi({ PATH: '/usr/bin' }, { git })).toEqual({
      provider: 'local',
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
      commitSha: SHA,
      branch: 'my-branch',
    });
  });

  it('leaves the branch out on a detached HEAD', () => {
    const detached: GitRunner = (args) => (args.includes('--abbrev-ref') ? 'HEAD' : git(args));
    expect(detectCi({}, { git: detached }).branch).toBeUndefined();
  });

  it('fills only what the CI did not say', () => {
    const env = { JENKINS_URL: 'https://ci.example.com/', GIT_COMMIT: OTHER_SHA, BRANCH_NAME: 'main' };
    expect(detectCi(env, { git })).toEqual({
      provider: 'jenkins',
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
      commitSha: OTHER_SHA,
      branch: 'main',
    });
  });
});
