// A repeated suite's tests are remembered between uploads (src/app/ingest/prepare/seen-cache.ts) instead of
// being looked up again. What a user changes in between — a quarantine override, a flag — must be
// what the next upload acts on.
import { describe, expect, it } from 'vitest';
import { healthVersion } from '../../src/store/tenancy/repos.ts';
import { seenOf, type TestCaseRow } from '../../src/store/tests/cases.ts';
import { REPO } from '../support/app.ts';
import { repositoryRow, storedResultsOf, storedTestId, storedTestsOf } from '../support/reads.ts';
import { abcSuite, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

describe('uploads of a known suite', () => {
  const t = useTestApp();
  const scope = { repo: REPO, org_url_slug: 'acme' };

  it('a quarantine override set between two uploads decides the next upload’s answer and stored failure', async () => {
    for (const sha of ['a1', 'a2']) {
      const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: abcSuite([]) }], { sha });
      expect(res.statusCode).toBe(200);
    }
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: await storedTestId(t, 'test_b'), setting: 'ALWAYS_QUARANTINE' },
      t.orgToken,
    );
    expect(override.statusCode).toBe(200);

    const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: abcSuite(['test_b']) }], {
      sha: 'a3',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().failed_tests).toEqual([expect.objectContaining({ name: 'test_b', quarantined: true })]);
    expect(res.json().all_failures_quarantined).toBe(true);
    expect(await storedResultsOf(t, res.json().upload_id)).toMatchObject([
      { outcome: 'failed', quarantined: 1 },
    ]);
  });

  it('a quarantine lifted between two uploads is lifted for the next upload', async () => {
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: await storedTestId(t, 'test_b'), setting: 'NEVER_QUARANTINE' },
      t.orgToken,
    );
    expect(override.statusCode).toBe(200);
    const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: abcSuite(['test_b']) }], {
      sha: 'a4',
    });
    expect(res.json().failed_tests).toEqual([
      expect.objectContaining({ name: 'test_b', quarantined: false }),
    ]);
    expect(await storedResultsOf(t, res.json().upload_id)).toMatchObject([
      { outcome: 'failed', quarantined: 0 },
    ]);
  });
});

describe('what ingestion remembers of a repository’s tests', () => {
  const t = useTestApp({ now: () => now });
  let now = Date.UTC(2026, 10, 2, 9);
  const suite = (failing: string[]) => abcSuite(failing, { files: true });

  /** Every row the cache holds for the repository's current version, as the database holds it. */
  async function expectCacheAgrees(): Promise<number> {
    const repo = await repositoryRow(t, REPO);
    const known = t.caches.seenTests.lookup(repo.id, await healthVersion(t.db.database.db, repo.id));
    const stored = new Map((await storedTestsOf(t, REPO)).map((r) => [r.id, r] as const));
    for (const [id, row] of known.full) expect(row).toEqual(stored.get(id));
    for (const [id, row] of known.tests) expect(row).toEqual(seenOf(stored.get(id) as TestCaseRow));
    return known.full.size;
  }

  it('re-evaluated tests are remembered as recomputed, owners and sightings as rewritten', async () => {
    const steps = [
      { failing: ['test_b', 'test_c'], sha: 's1', owners: '* @team-a', hours: 0 },
      // test_b passes on the commit it failed on: flaky; owners change for every test.
      { failing: ['test_c'], sha: 's1', owners: '* @team-b', hours: 0 },
      // Over an hour later: every test is seen again.
      { failing: ['test_c'], sha: 's2', owners: '* @team-b', hours: 2 },
      { failing: [], sha: 's3', owners: '*.py @team-c', hours: 0 },
    ];
    const remembered: number[] = [];
    for (const step of steps) {
      now += step.hours * 3_600_000;
      const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: suite(step.failing) }], {
        sha: step.sha,
        codeowners: step.owners,
      });
      expect(res.statusCode).toBe(200);
      remembered.push(await expectCacheAgrees());
    }
    // The failing tests were re-evaluated and kept whole after each upload.
    expect(remembered.every((n) => n > 0)).toBe(true);
    const flaky = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      { repo: REPO, org_url_slug: 'acme', status: 'FLAKY', page_query: { page_size: 100 } },
      t.orgToken,
    );
    expect(flaky.json().tests.map((x: { name: string }) => x.name)).toEqual(['test_b']);
  });
});
