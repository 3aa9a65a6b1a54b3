// Ingestion's caches are the app's (app/caches.ts), sized from the configuration: with
// MAINLINE_SEEN_TESTS_CACHE=0 nothing is remembered between uploads and every answer is the same as
// with the cache; MAINLINE_TEST_ID_CACHE and MAINLINE_FAILURE_CACHE at their smallest change no id or
// failure group either.
import { describe, expect, it } from 'vitest';
import { healthVersion } from '../../src/store/tenancy/repos.ts';
import { REPO } from '../support/app.ts';
import { repositoryRow, storedTestId } from '../support/reads.ts';
import { abcSuite, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

// A failure text per test: the failure summaries checked below name their test.
const suite = (failing: string[]) => abcSuite(failing, { text: (name) => `AssertionError: ${name} broke` });

/** Uploads the suite three times with an override set before the last, which the last answers. */
async function overrideBetweenUploads(t: ReturnType<typeof useTestApp>) {
  for (const sha of ['a1', 'a2']) {
    const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: suite(['test_c']) }], { sha });
    expect(res.statusCode).toBe(200);
  }
  const override = await t.post(
    '/v1/flaky-tests/set-quarantine-override',
    {
      repo: REPO,
      org_url_slug: 'acme',
      test_id: await storedTestId(t, 'test_b'),
      setting: 'ALWAYS_QUARANTINE',
    },
    t.orgToken,
  );
  expect(override.statusCode).toBe(200);
  const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: suite(['test_b', 'test_c']) }], {
    sha: 'a3',
  });
  expect(res.statusCode).toBe(200);
  expect(res.json().failed_tests).toEqual([
    expect.objectContaining({ name: 'test_b', quarantined: true }),
    expect.objectContaining({ name: 'test_c', quarantined: false }),
  ]);
}

/** What the seen cache holds for the repository at its current version. */
async function remembered(t: ReturnType<typeof useTestApp>): Promise<number> {
  const repo = await repositoryRow(t, REPO);
  return t.caches.seenTests.lookup(repo.id, await healthVersion(t.db.database.db, repo.id)).tests.size;
}

describe('ingestion with its caches at their default sizes', () => {
  const t = useTestApp();

  it('remembers the suite, and answers the override set between uploads', async () => {
    await overrideBetweenUploads(t);
    expect(await remembered(t)).toBe(3);
  });
});

describe('ingestion with MAINLINE_SEEN_TESTS_CACHE=0 and the smallest id and failure caches', () => {
  const t = useTestApp({
    env: { MAINLINE_SEEN_TESTS_CACHE: '0', MAINLINE_TEST_ID_CACHE: '0', MAINLINE_FAILURE_CACHE: '0' },
  });

  it('remembers nothing, and answers as with the caches', async () => {
    await overrideBetweenUploads(t);
    expect(await remembered(t)).toBe(0);
    // test_c failed the same way in each upload: one failure group, as with the caches.
    const details = await t.post(
      '/v1/flaky-tests/get-test-details',
      { repo: REPO, org_url_slug: 'acme', test_id: await storedTestId(t, 'test_c') },
      t.orgToken,
    );
    expect(details.statusCode).toBe(200);
    expect(details.json().test.most_common_failures).toEqual([
      expect.objectContaining({ summary: 'AssertionError: test_c broke', occurrence_count: 3 }),
    ]);
  });
});
