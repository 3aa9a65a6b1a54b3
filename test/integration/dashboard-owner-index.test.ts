// The code-owner index (test_owners, migration 0032) behind the dashboard's owner filters, through the
// real HTTP stack on both engines: the all-tests page (owner alone, with a search, with a file; kept
// search texts and the database's search, MAINLINE_KEPT_TEST_TEXTS=0) and the unhealthy-tests page
// (owner with status and search) list a test under its owners only, follow a CODEOWNERS change (a
// test shows under its new owner only), count an owner named twice once, and the migration fills the
// index from stored rows exactly as ingestion keeps it.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.ts';
import type { TestApp } from '../support/app.ts';
import { type KeptAndNone, keptAndNone } from '../support/kept-and-none.ts';
import { MIGRATION_NAMES, migratorOf } from '../support/migrations.ts';
import { junitXml, upload } from '../support/upload.ts';

const BASE = '/acme/repos/github.com/acme/web';
const FIRST = '* @acme/web\n/src/payments/ @acme/payments @acme/web @acme/payments\n';
const SECOND = '* @acme/web\n/src/payments/ @acme/billing\n';
const THIRD = '* @acme/web\n/src/payments/ @acme/payments\n';

const TESTS = [
  { name: 'test_login', file: 'src/auth/login.test.ts' },
  { name: 'test_render', file: 'src/web/render.test.ts' },
  { name: 'test_charge', file: 'src/payments/charge.test.ts' },
];

const by = (owner: string) => `owner=${encodeURIComponent(owner)}`;

describe('the code-owner index behind the dashboard’s owner filters', () => {
  let kept: TestApp;
  let none: TestApp;
  let both: KeptAndNone;
  /** The all-tests page on both servers, which must agree. */
  const allTests = async (query: string) => {
    const answer = await both.page(kept, `${BASE}/tests?${query}`);
    expect(await both.page(none, `${BASE}/tests?${query}`), query).toEqual(answer);
    return answer;
  };
  const unhealthyNames = async (query: string) => (await both.page(kept, `${BASE}?${query}`)).names;
  /** test_refund fails, then passes on the same commit (FLAKY), with the other tests passing. */
  const send = async (
    t: TestApp,
    codeowners: string,
    sha: string,
    extra: typeof TESTS = [],
    token = both.token(t),
  ) => {
    for (const fail of [true, false]) {
      const cases = [
        ...TESTS,
        ...extra,
        {
          name: 'test_refund',
          file: 'src/payments/refund.test.ts',
          fail: fail ? 'Error: refund' : (false as const),
        },
      ];
      const res = await upload(t, token, [{ name: 'r.xml', content: junitXml(cases) }], {
        sha,
        pr: 7,
        branch: 'feature/x',
        codeowners,
      });
      expect(res.statusCode, res.body).toBe(200);
    }
  };

  beforeAll(async () => {
    both = await keptAndNone((t, token) => send(t, FIRST, 'c0ffee01', [], token));
    ({ kept, none } = both);
  });
  afterAll(() => both.close());

  it('lists a test under each of its owners, alone and with a search, a file or a status', async () => {
    expect(await allTests(by('@acme/payments'))).toEqual({
      names: ['test_charge', 'test_refund'],
      count: '2 tests match.',
    });
    expect((await allTests(by('@acme/web'))).names).toEqual([
      'test_charge',
      'test_login',
      'test_refund',
      'test_render',
    ]);
    expect((await allTests(`${by('@acme/payments')}&q=REFUND`)).names).toEqual(['test_refund']);
    expect((await allTests(`${by('@acme/web')}&file=auth`)).names).toEqual(['test_login']);
    expect((await allTests(`${by('@acme/web')}&q=charge&file=payments`)).names).toEqual(['test_charge']);
    // A whole owner only: not a prefix, not a pattern.
    expect((await allTests(by('@acme'))).names).toEqual([]);
    expect((await allTests(by('%'))).names).toEqual([]);
    expect(await unhealthyNames(`show=flaky&q=refund&${by('@acme/payments')}`)).toEqual(['test_refund']);
    expect(await unhealthyNames(by('@acme/web'))).toEqual(['test_refund']);
    expect(await unhealthyNames(`show=broken&${by('@acme/payments')}`)).toEqual([]);
  });

  it('follows a CODEOWNERS change: a test shows under its new owners only', async () => {
    const payout = [{ name: 'test_payout', file: 'src/payments/payout.test.ts' }];
    for (const t of [kept, none]) await send(t, SECOND, 'c0ffee02', payout);
    for (const query of [by('@acme/payments'), `${by('@acme/payments')}&q=refund`]) {
      expect(await allTests(query), query).toEqual({ names: [], count: '0 tests match.' });
    }
    expect((await allTests(by('@acme/billing'))).names).toEqual([
      'test_charge',
      'test_payout',
      'test_refund',
    ]);
    expect((await allTests(`${by('@acme/billing')}&q=REFUND`)).names).toEqual(['test_refund']);
    expect((await allTests(by('@acme/web'))).names).toEqual(['test_login', 'test_render']);
    expect((await allTests(`${by('@acme/web')}&file=payments`)).names).toEqual([]);
    expect(await unhealthyNames(by('@acme/payments'))).toEqual([]);
    expect(await unhealthyNames(by('@acme/web'))).toEqual([]);
    expect(await unhealthyNames(`show=flaky&q=refund&${by('@acme/billing')}`)).toEqual(['test_refund']);
    // Owners alone change (no new test): what was kept of an owner's tests is not used again.
    for (const t of [kept, none]) await send(t, THIRD, 'c0ffee03', payout);
    expect((await allTests(`${by('@acme/billing')}&q=REFUND`)).names).toEqual([]);
    expect((await allTests(`${by('@acme/payments')}&q=REFUND`)).names).toEqual(['test_refund']);
    expect((await allTests(`${by('@acme/payments')}&file=payments`)).count).toBe('3 tests match.');
  });

  it('is filled by its migration from the stored rows exactly as ingestion keeps it', async () => {
    const db = kept.db.database.db;
    const rows = async () =>
      (
        await sql<{ owner: string; name: string; ordinal: number }>`
          select owner, name, ordinal from test_owners order by owner, name`.execute(db)
      ).rows.map((r) => `${r.owner} ${r.name} ${Number(r.ordinal)}`);
    const before = await rows();
    expect(before).toHaveLength(5);
    const previous = MIGRATION_NAMES[MIGRATION_NAMES.indexOf('0032_test_owners') - 1] as string;
    const down = await migratorOf(db).migrateTo(previous);
    expect(down.error).toBeUndefined();
    const up = await migrateToLatest(kept.db.database);
    expect(up.applied).toContain('0032_test_owners');
    expect(await rows()).toEqual(before);
    // A combination not asked before (no page kept): read from the filled index.
    expect((await allTests(`${by('@acme/payments')}&q=payout`)).names).toEqual(['test_payout']);
  });
});
