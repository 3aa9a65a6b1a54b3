// An upload's attempts are prepared for storing while its files are parsed (src/app/ingest/prepare/upload-prep.ts),
// against what the server knew of the repository's tests when the upload began. What a user changes
// meanwhile must still decide the upload: a preparation made before the change is not used. And an
// upload of several files (a test in more than one of them, a file refused) stores each test once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext, Caller } from '../../src/app/context.ts';
import { ingestUpload } from '../../src/app/ingest/ingest.ts';
import { ParserPool } from '../../src/app/ingest/parsing/pool.ts';
import { prepareUpload } from '../../src/app/ingest/prepare/prepare-upload.ts';
import type { UploadMeta } from '../../src/app/ingest/prepare/types.ts';
import { findOrgBySlug } from '../../src/store/tenancy/orgs.ts';
import { REPO } from '../support/app.ts';
import { storedResultsOf, storedTestId, storedTestNames } from '../support/reads.ts';
import { abcSuite, junit, junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

let pool: ParserPool;
afterAll(() => pool?.close());

async function* bytesOf(text: string): AsyncGenerator<Uint8Array> {
  yield Buffer.from(text);
}

describe('an upload prepared while it is parsed', () => {
  const t = useTestApp();
  let ctx: AppContext;
  let caller: Caller;
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const idOf = (name: string) => storedTestId(t, name);
  const meta = (sha: string): UploadMeta => ({
    repo: { ...REPO },
    org_url_slug: 'acme',
    branch: 'main',
    commit_sha: sha,
  });
  /** An upload as the route makes it: prepared once meta is known, its file parsed and prepared. */
  const prepared = async (sha: string, xml: string) => {
    const m = meta(sha);
    const prep = await prepareUpload(ctx, caller, m);
    const file = await pool.parse({
      name: 'r.xml',
      source: bytesOf(xml),
      maxBytes: 1 << 20,
      identity: prep.basis.identity,
      prep,
    });
    return { m, prep, files: [file] };
  };

  beforeAll(async () => {
    const org = await findOrgBySlug(t.db.database.db, 'acme');
    if (org === undefined) throw new Error('no organization acme');
    ctx = { db: t.db.database.db, config: t.config, now: () => Date.now(), caches: t.caches };
    pool = new ParserPool({ threads: 1, derivation: t.caches.derivation });
    caller = { tokenId: 'test', tokenName: 'test', orgId: org.id, orgSlug: 'acme' };
    for (const sha of ['a1', 'a2']) {
      const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: abcSuite([]) }], { sha });
      expect(res.statusCode).toBe(200);
    }
  });

  it('stores what was prepared when nothing changed meanwhile', async () => {
    const { m, prep, files } = await prepared('b1', abcSuite(['test_c']));
    const result = await ingestUpload(ctx, caller, { meta: m, files, source: 'multipart', prep });
    expect(result.counts).toMatchObject({ test_cases: 3, attempts: 3, failures: 1 });
    expect(result.failed_tests).toEqual([expect.objectContaining({ name: 'test_c', quarantined: false })]);
    expect(await storedResultsOf(t, result.upload_id)).toEqual([
      expect.objectContaining({ test_case_id: await idOf('test_c'), outcome: 'failed' }),
    ]);
  });

  it('a quarantine override set while the upload was parsed decides its answer and stored failure', async () => {
    const { m, prep, files } = await prepared('b2', abcSuite(['test_b']));
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: await idOf('test_b'), setting: 'ALWAYS_QUARANTINE' },
      t.orgToken,
    );
    expect(override.statusCode).toBe(200);
    const result = await ingestUpload(ctx, caller, { meta: m, files, source: 'multipart', prep });
    expect(result.failed_tests).toEqual([expect.objectContaining({ name: 'test_b', quarantined: true })]);
    expect(result.all_failures_quarantined).toBe(true);
    expect(await storedResultsOf(t, result.upload_id)).toEqual([
      expect.objectContaining({ outcome: 'failed', quarantined: 1 }),
    ]);
  });

  it('a change made while an upload of new tests was parsed is not forgotten by the next upload', async () => {
    // The upload knows none of its tests: what it prepared holds whatever changed meanwhile, but what
    // it remembers of the repository's other tests afterwards must be as they are now.
    const { m, prep, files } = await prepared('c1', junitXml([{ name: 'test_fresh' }]));
    const override = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: await idOf('test_c'), setting: 'ALWAYS_QUARANTINE' },
      t.orgToken,
    );
    expect(override.statusCode).toBe(200);
    expect(
      (await ingestUpload(ctx, caller, { meta: m, files, source: 'multipart', prep })).counts.test_cases,
    ).toBe(1);
    const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: abcSuite(['test_c']) }], {
      sha: 'c2',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().failed_tests).toEqual([expect.objectContaining({ name: 'test_c', quarantined: true })]);
    expect(await storedResultsOf(t, res.json().upload_id)).toEqual([
      expect.objectContaining({ outcome: 'failed', quarantined: 1 }),
    ]);
  });

  it('stores each test once when several files of one upload hold it, and nothing of a refused file', async () => {
    const first = junitXml([{ name: 'test_a' }, { name: 'test_new' }]);
    const second = junitXml([
      { name: 'test_a', fail: 'AssertionError: again' },
      { name: 'test_c' },
      { name: 'test_new' },
    ]);
    const res = await upload(
      t,
      t.orgToken,
      [
        { name: 'one.xml', content: first },
        { name: 'broken.xml', content: junit('18-web-test-runner-template-MALFORMED.xml') },
        { name: 'two.xml', content: second },
      ],
      { sha: 'b3' },
    );
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.counts).toMatchObject({ files: 3, test_cases: 3, attempts: 5, failures: 1 });
    expect(body.files.map((f: { ok: boolean }) => f.ok)).toEqual([true, false, true]);
    expect(body.failed_tests).toEqual([expect.objectContaining({ name: 'test_a' })]);
    expect(await storedTestNames(t)).toEqual(['test_a', 'test_b', 'test_c', 'test_fresh', 'test_new']);
    // test_a: five passes before, and a pass (one.xml) and a failure (two.xml) now.
    const details = await t.post(
      '/v1/flaky-tests/get-test-details',
      { ...scope, test_id: await idOf('test_a') },
      t.orgToken,
    );
    expect(details.statusCode).toBe(200);
    expect(details.json().test.failure_rate_last_7d).toBeCloseTo(1 / 7, 6);
  });
});
