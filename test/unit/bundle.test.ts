import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type BundleResult, extractBundle, toUploadMeta } from '../../src/app/bundle/index.ts';
import { NO_BRANCH } from '../../src/app/bundle/meta.ts';
import {
  buildTar,
  chunks,
  cliBundle,
  concat,
  END_OF_ARCHIVE,
  fixture,
  fixtureMeta,
  junitFixture,
  metaJson,
  tarHeader,
  tarPadding,
  zstdStored,
} from '../support/bundles.ts';

const FAIL_XML = junitFixture('01-trunk-analytics-cli-googletest-fail.xml');
const PASS_XML = junitFixture('02-trunk-analytics-cli-googletest-pass-retry.xml');

function ok(result: BundleResult): Extract<BundleResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected ok, got ${result.code}: ${result.error}`);
  return result;
}

describe('extractBundle: a bundle as trunk-analytics-cli writes it (real zstd, GNU tar)', () => {
  it('reads meta.json, the two JUnit files and CODEOWNERS', async () => {
    const result = ok(await extractBundle(chunks(fixture('cli-like.tar.zstd'), 64 * 1024)));
    expect(result.format).toBe('tar+zstd');
    expect(result.problems).toEqual([]);
    expect(result.meta).toMatchObject({
      repo: { host: 'github.com', owner: 'acme', name: 'web' },
      orgSlug: 'acme',
      repoUrl: 'https://github.com/acme/web.git',
      branch: 'feature/login',
      commitSha: '8f3c2a1d9e4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d',
      commitEpoch: 1724102768,
      authorName: 'Ada Lovelace',
      prNumber: 42,
      jobName: 'unit-tests',
      jobUrl: 'https://github.com/acme/web/actions/runs/9876543210',
      runAttempt: 2,
      variant: 'linux-x64',
      codeowners: '* @acme/everyone\n/src/login/ @acme/web\n',
      codeownersPath: '/home/runner/work/web/web/.github/CODEOWNERS',
      uploadTimeEpoch: 1724103000,
      testCommand: 'npx vitest run',
      bundleUploadId: '01J5Z8XG7Q3W2R1T0Y9U8I7O6P',
      tags: [{ key: 'shard', value: '1' }],
      junitFiles: [
        {
          path: 'junit/0',
          originalPath: '/home/runner/work/web/web/out/junit0_fail.xml',
          originalPathRel: 'out/junit0_fail.xml',
        },
        {
          path: 'junit/1',
          originalPath: '/home/runner/work/web/web/out/junit0_pass.xml',
          originalPathRel: 'out/junit0_pass.xml',
        },
      ],
    });
    expect(result.meta.prTitle).toBeUndefined();
    expect(result.meta.envs['GITHUB_REF']).toBe('refs/pull/42/merge');
    expect(result.rawMeta['num_tests']).toBe(4);
    expect(result.files).toEqual([
      { name: 'junit/0', originalPath: '/home/runner/work/web/web/out/junit0_fail.xml', bytes: FAIL_XML },
      { name: 'junit/1', originalPath: '/home/runner/work/web/web/out/junit0_pass.xml', bytes: PASS_XML },
    ]);
  });

  it('gives the same result for 1-byte chunks', async () => {
    const bytes = fixture('cli-like.tar.zstd');
    const whole = await extractBundle(chunks(bytes, bytes.length));
    expect(await extractBundle(chunks(bytes, 1))).toEqual(whole);
    expect(await extractBundle(chunks(bytes, 7))).toEqual(whole);
  });

  it('decodes a multi-block level-19 stream (8 MiB window) in any chunking', async () => {
    const bytes = fixture('multi-block.tar.zstd');
    for (const size of [1, 4096, bytes.length]) {
      const result = ok(await extractBundle(chunks(bytes, size)));
      expect(result.files.map((f) => f.name)).toEqual(['junit/0']);
      const file = result.files[0]!;
      expect(file.bytes.length).toBe(683391);
      expect(createHash('sha256').update(file.bytes).digest('hex')).toBe(
        '6228703d1912359b6540d7ac0011837641b2c032bd02e1e24a44d63360c5f554',
      );
    }
  });

  it('accepts a Node Readable', async () => {
    const result = ok(await extractBundle(Readable.from([Buffer.from(fixture('cli-like.tar.zstd'))])));
    expect(result.files).toHaveLength(2);
  });
});

describe('extractBundle: bundles written by other tools', () => {
  it('reads a tar-stream (ustar) archive in hand-written zstd frames, also byte by byte', async () => {
    const bytes = await cliBundle();
    const result = ok(await extractBundle(chunks(bytes, 1)));
    expect(result.files.map((f) => [f.name, f.bytes])).toEqual([
      ['junit/0', FAIL_XML],
      ['junit/1', PASS_XML],
    ]);
    expect(result.meta.codeowners).toBe('* @acme/everyone\n');
    expect(await extractBundle(chunks(bytes, bytes.length))).toEqual(result);
  });

  it('accepts a gzip-compressed tar and a plain tar', async () => {
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson() },
      { name: 'junit/0', data: FAIL_XML },
      { name: 'junit/1', data: PASS_XML },
    ]);
    const gzipped = ok(await extractBundle(chunks(gzipSync(tar), 3)));
    expect(gzipped.format).toBe('tar+gzip');
    expect(gzipped.files).toHaveLength(2);
    const plain = ok(await extractBundle(chunks(tar, 100)));
    expect(plain.format).toBe('tar');
    expect(plain.files.map((f) => f.bytes)).toEqual([FAIL_XML, PASS_XML]);
  });

  it('reads a bundle whose meta.json is not the first entry, and normalises ./ paths', async () => {
    const tar = await buildTar([
      { name: './junit/1', data: PASS_XML },
      { name: './junit/0', data: FAIL_XML },
      { name: 'junit/2', data: '<testsuites/>' },
      { name: './meta.json', data: metaJson() },
    ]);
    const result = ok(await extractBundle(chunks(zstdStored(tar), 512)));
    expect(result.files.map((f) => f.name)).toEqual(['junit/0', 'junit/1']);
    expect(result.problems).toEqual([]);
  });

  it('falls back to every JUnit-looking entry when meta.json lists none (pax long names included)', async () => {
    const longName = `reports/${'deeply-nested/'.repeat(12)}TEST-suite.xml`;
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson({ file_sets: [] }) },
      { name: 'reports', type: 'directory' },
      { name: longName, data: FAIL_XML },
      { name: 'notes.txt', data: 'not junit' },
      { name: 'b.junit', data: PASS_XML },
    ]);
    expect(longName.length).toBeGreaterThan(155);
    const result = ok(await extractBundle(chunks(zstdStored(tar), 300)));
    expect(result.files.map((f) => f.name)).toEqual([longName, 'b.junit']);
    expect(result.problems).toEqual(['meta.json lists no JUnit files; read every junit/* and *.xml entry']);
  });

  it('reads GNU long names (the Rust tar crate writes them for paths over 100 bytes)', async () => {
    const long = `out/${'x'.repeat(150)}.xml`;
    const name = Buffer.from(`${long}\0`);
    const meta = Buffer.from(metaJson({ file_sets: [] }));
    const tar = concat([
      tarHeader('meta.json', meta.length),
      meta,
      tarPadding(meta.length),
      tarHeader('././@LongLink', name.length, 'L'),
      name,
      tarPadding(name.length),
      tarHeader(long.slice(0, 100), FAIL_XML.length),
      FAIL_XML,
      tarPadding(FAIL_XML.length),
      END_OF_ARCHIVE,
    ]);
    const result = ok(await extractBundle(chunks(zstdStored(tar), 1)));
    expect(result.files).toEqual([{ name: long, bytes: FAIL_XML }]);
  });

  it('reports listed files that are missing', async () => {
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson() },
      { name: 'junit/0', data: FAIL_XML },
    ]);
    const result = ok(await extractBundle(chunks(zstdStored(tar), 4096)));
    expect(result.files.map((f) => f.name)).toEqual(['junit/0']);
    expect(result.problems).toEqual(['meta.json lists "junit/1" but the bundle has no such file']);
  });
});

describe('extractBundle: meta.json mapping', () => {
  async function metaOf(meta: Record<string, unknown>) {
    const tar = await buildTar([{ name: 'meta.json', data: JSON.stringify(meta) }]);
    return extractBundle(chunks(zstdStored(tar), 4096));
  }

  it('parses the repository from repo_url when repo.repo is missing, and strips refs/remotes/origin/', async () => {
    const base = fixtureMeta();
    const repo = {
      repo_url: 'git@gitlab.com:acme/platform/api.git',
      repo_head_sha: 'abc123',
      repo_head_branch: 'refs/remotes/origin/main',
    };
    const result = ok(await metaOf({ ...base, repo, envs: {} }));
    expect(result.meta.repo).toEqual({ host: 'gitlab.com', owner: 'acme/platform', name: 'api' });
    expect(result.meta.branch).toBe('main');
    expect(result.meta.prNumber).toBeUndefined();
  });

  it('takes the branch, PR and job from GitLab variables when git had none', async () => {
    const envs = {
      GITLAB_CI: 'true',
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'fix/flaky',
      CI_MERGE_REQUEST_IID: '7',
      CI_MERGE_REQUEST_TITLE: 'Fix the flaky test',
      CI_JOB_NAME: 'rspec 1/4',
      CI_JOB_URL: 'https://gitlab.com/acme/api/-/jobs/1',
    };
    const repo = {
      repo: { host: 'gitlab.com', owner: 'acme', name: 'api' },
      repo_head_sha: 'abc',
      repo_head_branch: '',
    };
    const result = ok(await metaOf({ org: 'acme', repo, envs }));
    expect(result.meta).toMatchObject({
      branch: 'fix/flaky',
      prNumber: 7,
      prTitle: 'Fix the flaky test',
      jobName: 'rspec 1/4',
    });
    expect(result.meta.junitFiles).toEqual([]);
  });
});

describe('extractBundle: branch and pull request from what CI says', () => {
  async function metaOf(repo: Record<string, unknown>, envs: Record<string, string>, extra = {}) {
    const tar = await buildTar([
      { name: 'meta.json', data: JSON.stringify({ org: 'acme', repo, envs, ...extra }) },
    ]);
    return ok(await extractBundle(chunks(zstdStored(tar), 4096))).meta;
  }
  const repoWith = (branch: string, more = {}) => ({
    repo: { host: 'github.com', owner: 'acme', name: 'web' },
    repo_head_sha: 'abc',
    repo_head_branch: branch,
    ...more,
  });
  // What trunk-analytics-cli sends from a GitHub pull_request job: git's merge ref, the CI's envs.
  const githubPr = {
    GITHUB_ACTIONS: 'true',
    GITHUB_REF: 'refs/pull/42/merge',
    GITHUB_HEAD_REF: 'feature/login',
    GITHUB_BASE_REF: 'main',
  };

  it('a GitHub pull request: the head branch from GITHUB_HEAD_REF, never "42/merge"', async () => {
    const meta = await metaOf(repoWith('refs/remotes/pull/42/merge'), githubPr);
    expect(meta).toMatchObject({ branch: 'feature/login', prNumber: 42 });
    expect(toUploadMeta(meta)).toMatchObject({ ok: true, meta: { branch: 'feature/login', pr_number: 42 } });
  });

  it.each([
    [
      'GitLab',
      { GITLAB_CI: 'true', CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: 'feature/login', CI_MERGE_REQUEST_IID: '12' },
      12,
    ],
    ['Buildkite', { BUILDKITE: 'true', BUILDKITE_BRANCH: 'feature/login', BUILDKITE_PULL_REQUEST: '13' }, 13],
    [
      'CircleCI',
      {
        CIRCLECI: 'true',
        CIRCLE_BRANCH: 'feature/login',
        CIRCLE_PULL_REQUEST: 'https://github.com/acme/web/pull/14',
      },
      14,
    ],
    [
      'Jenkins',
      { JENKINS_URL: 'https://ci/', BUILD_ID: '3', CHANGE_BRANCH: 'feature/login', CHANGE_ID: '15' },
      15,
    ],
    [
      'Azure Pipelines',
      {
        TF_BUILD: 'True',
        BUILD_SOURCEBRANCH: 'refs/pull/16/merge',
        SYSTEM_PULLREQUEST_SOURCEBRANCH: 'refs/heads/feature/login',
      },
      16,
    ],
    [
      'Bitbucket Pipelines',
      { BITBUCKET_BUILD_NUMBER: '9', BITBUCKET_BRANCH: 'feature/login', BITBUCKET_PR_ID: '17' },
      17,
    ],
  ])("%s: the envs' branch and PR win over git's merge ref", async (_ci, envs, pr) => {
    const meta = await metaOf(repoWith(`refs/remotes/pull/${pr}/merge`), envs);
    expect(meta).toMatchObject({ branch: 'feature/login', prNumber: pr });
  });

  it("CI's branch wins over git's, unless the user passed the repository values (use_uncloned_repo)", async () => {
    const push = { GITHUB_ACTIONS: 'true', GITHUB_REF: 'refs/heads/main' };
    expect((await metaOf(repoWith('refs/heads/detached-copy'), push)).branch).toBe('main');
    const given = repoWith('refs/heads/release/2', { use_uncloned_repo: true });
    expect((await metaOf(given, githubPr)).branch).toBe('release/2');
  });

  it('a merge ref and envs that name no branch: the PR is known and its results go under pull/<n>', async () => {
    const meta = await metaOf(repoWith('refs/remotes/pull/42/merge'), {
      TF_BUILD: 'True',
      BUILD_SOURCEBRANCH: 'refs/pull/42/merge',
    });
    expect(meta.branch).toBe('pull/42');
    expect(meta.prNumber).toBe(42);
    expect(toUploadMeta(meta)).toMatchObject({ ok: true, meta: { branch: 'pull/42', pr_number: 42 } });
  });

  it('no branch and no pull request: the error says what to pass', async () => {
    const meta = await metaOf(repoWith(''), { TF_BUILD: 'True' });
    expect(meta.branch).toBeUndefined();
    expect(toUploadMeta(meta)).toEqual({ ok: false, error: NO_BRANCH });
    expect(NO_BRANCH).toContain('--repo-head-branch');
  });
});

describe('toUploadMeta', () => {
  it('maps a bundle onto the upload contract, the caller org winning', async () => {
    const result = ok(await extractBundle(chunks(fixture('cli-like.tar.zstd'), 4096)));
    expect(toUploadMeta(result.meta, 'acme-inc')).toEqual({
      ok: true,
      meta: {
        repo: { host: 'github.com', owner: 'acme', name: 'web' },
        org_url_slug: 'acme-inc',
        branch: 'feature/login',
        commit_sha: '8f3c2a1d9e4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d',
        pr_number: 42,
        job_name: 'unit-tests',
        job_url: 'https://github.com/acme/web/actions/runs/9876543210',
        variant: 'linux-x64',
        run_attempt: 2,
        codeowners: '* @acme/everyone\n/src/login/ @acme/web\n',
        upload_key: '01J5Z8XG7Q3W2R1T0Y9U8I7O6P',
      },
    });
    const { branch: _, ...noBranch } = result.meta;
    expect(toUploadMeta(noBranch)).toEqual({
      ok: false,
      error: NO_BRANCH,
    });
  });
});
