// A repeated suite's tests are remembered between uploads (src/app/ingest/seen-cache.ts) instead of
// being looked up again. What a user changes in between — a quarantine override, a flag — must be
// what the next upload acts on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { junitXml, upload } from '../support/upload.ts';

describe('uploads of a known suite', () => {
  let t: TestApp;
  let token: string;
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const suite = (failing: string[]) =>
    junitXml(
      ['test_a', 'test_b', 'test_c'].map((name) => ({
        name,
        fail: failing.includes(name) ? 'AssertionError: boom' : false,
      })),
    );
  const idOf = async (name: string) =>
    (
      await t.db.database.db
        .selectFrom('test_cases')
        .select('id')
        .where('name', '=', name)
        .executeTakeFirstOrThrow()
    ).id;
  const storedFailure = (uploadId: string) =>
    t.db.database.db
      .selectFrom('test_results')
      .select(['outcome', 'quarantined'])
      .where('upload_id', '=', uploadId)
      .executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await buildTestApp();
    token = await t.token('acme');
  });
  afterAll(() => t.close());

  it('a quarantine override set between two uploads decides the next upload’s answer and stored failure', async () => {
    for (const sha of ['a1', 'a2']) {
      const res = await upload(t, token, [{ name: 'r.xml', content: suite([]) }], { sha });
      expect(res.statusCode).toBe(200);
    }
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: await idOf('test_b'), setting: 'ALWAYS_QUARANTINE' },
      token,
    );
    expect(override.statusCode).toBe(200);

    const res = await upload(t, token, [{ name: 'r.xml', content: suite(['test_b']) }], { sha: 'a3' });
    expect(res.statusCode).toBe(200);
    expect(res.json().failed_tests).toEqual([expect.objectContaining({ name: 'test_b', quarantined: true })]);
    expect(res.json().all_failures_quarantined).toBe(true);
    expect(await storedFailure(res.json().upload_id)).toEqual({ outcome: 'failed', quarantined: 1 });
  });

  it('a quarantine lifted between two uploads is lifted for the next upload', async () => {
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: await idOf('test_b'), setting: 'NEVER_QUARANTINE' },
      token,
    );
    expect(override.statusCode).toBe(200);
    const res = await upload(t, token, [{ name: 'r.xml', content: suite(['test_b']) }], { sha: 'a4' });
    expect(res.json().failed_tests).toEqual([
      expect.objectContaining({ name: 'test_b', quarantined: false }),
    ]);
    expect(await storedFailure(res.json().upload_id)).toEqual({ outcome: 'failed', quarantined: 0 });
  });
});
