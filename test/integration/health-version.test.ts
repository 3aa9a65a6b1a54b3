// The repository's health_version names what its test-health reads show: the kept answers, page
// records, quarantine index and list snapshots (app/caches.ts) are reused while it stays. Every store
// writer of test_cases bumps it (store/tenancy/repos.ts writeTestHealth), and so does retention, which deletes
// the attempts the reads count.
import { afterEach, describe, expect, it } from 'vitest';
import { runHealthSweep } from '../../src/app/health/sweep.ts';
import { healthVersion } from '../../src/store/tenancy/repos.ts';
import { setManualFlag, setQuarantineOverride, setTicket } from '../../src/store/tests/case-writes.ts';
import {
  findTestCases,
  markSeen,
  setOwners,
  updateTestCases,
  upsertTestCases,
} from '../../src/store/tests/cases.ts';
import { deleteUploadWithAttempts } from '../../src/store/uploads/uploads.ts';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { sweepContext } from '../support/sweep.ts';
import { junitXml, upload } from '../support/upload.ts';

const DAY = 86_400_000;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('health_version', () => {
  it('a failing-tests list read just before retention pruned its failures is not given again after it', async () => {
    const start = Date.UTC(2026, 0, 1);
    let clock = start;
    const app = await buildTestApp({}, { now: () => clock });
    t = app;
    const token = await app.token('acme');
    const content = junitXml([
      { name: 'steady' },
      { name: 'shaky', fail: 'boom' },
      { name: 'wobbly', fail: 'bang' },
    ]);
    // On a PR branch no monitor watches: the periodic pass has no test to re-evaluate.
    const sent = await upload(app, token, [{ name: 'r.xml', content }], {
      sha: 'old',
      branch: 'feature',
      pr: 7,
    });
    expect(sent.statusCode).toBe(200);
    const failing = async () => {
      const res = await app.post(
        '/v1/flaky-tests/list-failing-tests',
        {
          repo: REPO,
          org_url_slug: 'acme',
          start_time: new Date(start).toISOString(),
          end_time: new Date(start + DAY).toISOString(),
          page_query: { page_size: 1 },
        },
        token,
      );
      expect(res.statusCode, res.body).toBe(200);
      const { tests, page } = res.json();
      return { total: page.total_rows, names: tests.map((x: { name: string }) => x.name) };
    };

    // Day 91: the upload is past the 90 days kept, but no sweep has run yet.
    clock += 91 * DAY;
    // Two failing tests on pages of one: the list is frozen in a snapshot, which a first page
    // reuses while the repository's health_version stays.
    expect(await failing()).toMatchObject({ total: 2, names: [expect.any(String)] });
    const sweep = await runHealthSweep(sweepContext(app, () => clock));
    expect(sweep.prunedUploads).toBe(1);
    // Minutes later, the same read shows what is left.
    clock += 60_000;
    expect(await failing()).toEqual({ total: 0, names: [] });
  });

  it('changes with every store write to test_cases and with every upload retention deletes', async () => {
    const app = await buildTestApp();
    t = app;
    const token = await app.token('acme');
    const content = junitXml([{ name: 'one' }, { name: 'two', fail: 'boom' }]);
    expect((await upload(app, token, [{ name: 'r.xml', content }])).statusCode).toBe(200);
    const db = app.db.database.db;
    const { id: repoId } = await db.selectFrom('repositories').select('id').executeTakeFirstOrThrow();
    const [row] = await db.selectFrom('test_cases').select('id').where('repo_id', '=', repoId).execute();
    const testId = row?.id as string;
    const [full] = await findTestCases(db, repoId, [testId]);
    const { id: uploadId } = await db.selectFrom('uploads').select('id').executeTakeFirstOrThrow();
    const writers: [string, () => Promise<unknown>][] = [
      ['setTicket', () => setTicket(db, repoId, testId, 'T-1', 'https://tickets.example/T-1')],
      ['setQuarantineOverride', () => setQuarantineOverride(db, repoId, testId, 'ALWAYS_QUARANTINE')],
      ['setManualFlag', () => setManualFlag(db, repoId, testId, JSON.stringify({ flagged: true }))],
      ['markSeen', () => markSeen(db, repoId, Date.now(), [testId])],
      ['setOwners', () => setOwners(db, repoId, new Map([[JSON.stringify(['@team']), [testId]]]))],
      ['updateTestCases', () => updateTestCases(db, repoId, [{ id: testId, patch: { prs_impacted_7d: 3 } }])],
      [
        'upsertTestCases',
        () =>
          upsertTestCases(db, {
            repoId,
            ids: ['fresh-test'],
            build: (id) => {
              const { ordinal: _ordinal, ...rest } = full as NonNullable<typeof full>;
              return { ...rest, id, name: 'fresh' };
            },
          }),
      ],
      ['deleteUploadWithAttempts', () => deleteUploadWithAttempts(db, uploadId)],
    ];
    for (const [name, write] of writers) {
      const before = await healthVersion(db, repoId);
      await write();
      expect(await healthVersion(db, repoId), name).toBeGreaterThan(before);
    }
  });
});
