import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createJunitParser, type JunitAttempt } from '../../src/domain/junit/index.ts';
import { testCaseId } from '../../src/domain/testid/index.ts';
import type { TestApp } from '../support/app.ts';
import { buildTar, metaJson, zstdStored } from '../support/bundles.ts';
import { trunkValidator } from '../support/trunk-schema.ts';
import { JUNIT_DIR, junit, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const FIXTURES = readdirSync(JUNIT_DIR).filter((f) => f.endsWith('.xml') && !f.includes('MALFORMED'));
const validDetailed = trunkValidator('DetailedTest');

/** What the parser makes of a fixture, with the test ids Trunk's recipe gives them (computed here, independently of the server). */
function expected(file: string, repo: string, variant = '') {
  const attempts: JunitAttempt[] = [];
  const parser = createJunitParser({ onAttempts: (b) => attempts.push(...b) });
  parser.write(junit(file));
  expect(parser.close().ok).toBe(true);
  const tests = new Map<string, { a: JunitAttempt; ran: number; failed: number }>();
  for (const a of attempts) {
    const id = testCaseId({ orgSlug: 'acme', repoFullName: repo, ...a, variant });
    const t = tests.get(id) ?? { a, ran: 0, failed: 0 };
    if (a.outcome !== 'skipped') t.ran += 1;
    if (a.outcome === 'failed') t.failed += 1;
    tests.set(id, t);
  }
  return { attempts, tests };
}

async function checkTests(
  t: TestApp,
  token: string,
  repo: { host: string; owner: string; name: string },
  tests: ReturnType<typeof expected>['tests'],
) {
  for (const [id, e] of tests) {
    const res = await t.post(
      '/v1/flaky-tests/get-test-details',
      { repo, org_url_slug: 'acme', test_id: id },
      token,
    );
    expect(res.statusCode, `${e.a.name} (${id})`).toBe(200);
    const test = res.json().test;
    expect(validDetailed(test)).toEqual([]);
    expect(test).toMatchObject({ id, name: e.a.name, variant: '' });
    expect(test.parent).toBe(e.a.parent ?? undefined);
    expect(test.classname).toBe(e.a.classname ?? undefined);
    expect(test.file_path).toBe(e.a.file ?? undefined);
    expect(test.failure_rate_last_7d).toBeCloseTo(e.ran === 0 ? 0 : e.failed / e.ran, 10);
  }
}

describe('every JUnit fixture through POST /v1/test-results/upload', () => {
  const t = useTestApp();

  it.each(FIXTURES)('%s yields its test cases, attempts and outcomes', async (file) => {
    const repo = { host: 'github.com', owner: 'acme', name: file.replace(/\.xml$/, '').toLowerCase() };
    const { attempts, tests } = expected(file, `github.com/acme/${repo.name}`);
    const res = await upload(t, t.orgToken, [{ name: file, content: junit(file) }], { repo });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.counts).toMatchObject({
      files: 1,
      test_cases: tests.size,
      attempts: attempts.length,
      failures: attempts.filter((a) => a.outcome === 'failed').length,
      retries: attempts.filter((a) => a.retryIndex > 0).length,
    });
    await checkTests(t, t.orgToken, repo, tests);
  });

  it('reports a malformed file with its line and column and still ingests the others', async () => {
    const res = await upload(t, t.orgToken, [
      { name: 'bad.xml', content: junit('18-web-test-runner-template-MALFORMED.xml') },
      { name: 'good.xml', content: junit('09-pytest-single-line.xml') },
    ]);
    expect(res.statusCode).toBe(200);
    const [bad, good] = res.json().files;
    expect(bad).toMatchObject({
      name: 'bad.xml',
      ok: false,
      problems: [{ severity: 'error', line: 9, column: 59 }],
    });
    expect(good).toMatchObject({ name: 'good.xml', ok: true });
    expect(res.json().counts.attempts).toBe(good.counts.attempts);
  });
});

describe('every JUnit fixture through the Trunk bundle flow (createBundleUpload + PUT)', () => {
  const t = useTestApp();

  async function putBundle(files: string[], repoName: string) {
    const repo = { host: 'github.com', owner: 'acme', name: repoName };
    const created = await t.post(
      '/v1/metrics/createBundleUpload',
      { repo, orgUrlSlug: 'acme', clientVersion: '0.7.8', remoteUrls: [] },
      t.orgToken,
    );
    expect(created.statusCode).toBe(200);
    const { url, id, idV2, key } = created.json();
    expect({ id, idV2, key }).toMatchObject({
      id: expect.any(String),
      idV2: id,
      key: expect.stringContaining(id),
    });
    const meta = metaJson({
      variant: '',
      repo: {
        repo,
        repo_url: `https://github.com/acme/${repoName}.git`,
        repo_head_sha: 'feedbeef',
        repo_head_branch: 'refs/heads/main',
      },
      file_sets: [
        {
          file_set_type: 'Junit',
          glob: '**/*.xml',
          files: files.map((f, i) => ({ original_path: `/ci/${f}`, path: `junit/${i}`, owners: [] })),
        },
      ],
    });
    const tar = await buildTar([
      { name: 'meta.json', data: meta },
      ...files.map((f, i) => ({ name: `junit/${i}`, data: junit(f) })),
    ]);
    const put = (body: Uint8Array) =>
      t.app.inject({
        method: 'PUT',
        url: new URL(url).pathname + new URL(url).search,
        payload: Buffer.from(body),
      });
    return { repo, put, bundle: zstdStored(tar) };
  }

  it.each(FIXTURES)('%s yields the same test cases as a direct upload', async (file) => {
    const name = `bundle-${file.replace(/\.xml$/, '').toLowerCase()}`;
    const { repo, put, bundle } = await putBundle([file], name);
    const res = await put(bundle);
    expect(res.statusCode, res.body).toBe(200);
    const { attempts, tests } = expected(file, `github.com/acme/${name}`);
    expect(res.json().counts).toMatchObject({ test_cases: tests.size, attempts: attempts.length });
    await checkTests(t, t.orgToken, repo, tests);
  });

  it('answers a repeated PUT of the same bundle with the same upload and stores nothing twice', async () => {
    const { put, bundle } = await putBundle(['09-pytest-single-line.xml'], 'bundle-repeat');
    const first = (await put(bundle)).json();
    const second = await put(bundle);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ upload_id: first.upload_id, duplicate: true });
  });

  it('refuses a PUT to an altered URL with 403, and a body that is not a bundle with a clear error', async () => {
    const { put, bundle } = await putBundle(['09-pytest-single-line.xml'], 'bundle-bad');
    const created = await t.post(
      '/v1/metrics/createBundleUpload',
      { repo: { host: 'github.com', owner: 'acme', name: 'x' }, orgUrlSlug: 'acme' },
      t.orgToken,
    );
    const forged = new URL(created.json().url);
    forged.searchParams.set('expires', String(Number(forged.searchParams.get('expires')) + 1000));
    const res = await t.app.inject({
      method: 'PUT',
      url: forged.pathname + forged.search,
      payload: Buffer.from(bundle),
    });
    expect(res.statusCode).toBe(403);
    const notBundle = await put(new TextEncoder().encode('<testsuite/>'));
    expect(notBundle.statusCode).toBe(415);
    expect(notBundle.json().error.message).toMatch(/bundle could not be read/);
  });

  it('getQuarantineConfig answers {isDisabled, testIds} for the uploader', async () => {
    const res = await t.post(
      '/v1/metrics/getQuarantineConfig',
      {
        repo: { host: 'github.com', owner: 'acme', name: 'never-uploaded' },
        orgUrlSlug: 'acme',
        remoteUrls: [],
        testIdentifiers: [],
      },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ isDisabled: false, testIds: [] });
  });
});
