// Migration 0010 moved passing attempts out of test_results into test_passes (a row per pass),
// migration 0012 from there into upload_passes (a row per upload). Data written by the real upload
// path is moved back (down, one migration at a time) and forward (up) again: the flaky-tests answers
// must not change, and no attempt may be lost or doubled on the way.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { countPasses } from '../../src/store/uploads/passes.ts';
import { REPO, type TestApp } from '../support/app.ts';
import { storedAttempts } from '../support/attempts.ts';
import { onPostgres } from '../support/database.ts';
import { migrationsAfter, migratorOf } from '../support/migrations.ts';
import { junit, junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

async function count(t: TestApp, table: string, where = sql`true`): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(t.db.database.db);
  return Number(rows[0]?.n ?? 0);
}

async function tableExists(t: TestApp, table: string): Promise<boolean> {
  const query = onPostgres
    ? sql<{
        n: number;
      }>`select count(*) as n from information_schema.tables where table_schema = current_schema() and table_name = ${table}`
    : sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = ${table}`;
  const { rows } = await query.execute(t.db.database.db);
  return Number(rows[0]?.n ?? 0) > 0;
}

describe('migrations 0010 and 0012: where passes are stored', () => {
  const t = useTestApp();
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const answers = async () => {
    const list = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      { ...scope, status: 'FLAKY', page_query: { page_size: 100 } },
      t.orgToken,
    );
    expect(list.statusCode).toBe(200);
    const ids = await t.db.database.db.selectFrom('test_cases').select('id').orderBy('id').execute();
    const details = [];
    for (const { id } of ids) {
      const res = await t.post('/v1/flaky-tests/get-test-details', { ...scope, test_id: id }, t.orgToken);
      expect(res.statusCode).toBe(200);
      details.push(res.json().test);
    }
    return { flaky: list.json().tests as unknown[], details };
  };

  it('moves passes back and forth without changing a single answer', async () => {
    const login = (fail: string | false) =>
      junitXml([{ name: 'test_login', fail }, { name: 'test_ok' }, { name: 'test_other' }]);
    await upload(t, t.orgToken, [{ name: 'a.xml', content: login('AssertionError: 500') }], {
      sha: 'c0ffee01',
    });
    await upload(t, t.orgToken, [{ name: 'a.xml', content: login(false) }], { sha: 'c0ffee01' });
    await upload(
      t,
      t.orgToken,
      [{ name: 'surefire.xml', content: junit('04-maven-surefire-flakyFailure.xml') }],
      {
        sha: 'c0ffee02',
      },
    );
    const before = await answers();
    expect(before.flaky.length).toBeGreaterThan(0);
    expect(before.details.some((d) => d.failure_rate_last_7d === 0)).toBe(true);
    const pairs = async () =>
      (await storedAttempts(t.db.database.db)).map((a) => `${a.upload_id} ${a.test_case_id}`).sort();
    const attempts = await pairs();
    const passes = await countPasses(t.db.database.db);
    const others = await count(t, 'test_results');
    expect(passes).toBeGreaterThan(0);
    expect(others).toBeGreaterThan(0);
    expect(attempts).toHaveLength(passes + others);
    expect(await count(t, 'test_results', sql`outcome = 'passed'`)).toBe(0);
    // The blobs as the live codec wrote them: 0012's own copy of the format must rebuild them exactly.
    const blobs = async () =>
      (
        await sql<{
          upload_id: string;
          count: number;
          at_min: number;
          ordinals: Uint8Array;
          details: Uint8Array;
        }>`
        select upload_id, count, at_min, ordinals, details from upload_passes order by upload_id`.execute(
          t.db.database.db,
        )
      ).rows.map((r) => [
        r.upload_id,
        Number(r.count),
        Number(r.at_min),
        Buffer.from(r.ordinals),
        Buffer.from(r.details),
      ]);
    const blobsBefore = await blobs();

    const migrator = migratorOf(t.db.database.db);
    // 0012 down: a row per pass again.
    const rows = await migrator.migrateTo('0011_test_ordinals');
    expect(rows.error).toBeUndefined();
    expect(await tableExists(t, 'upload_passes')).toBe(false);
    expect(await count(t, 'test_passes')).toBe(passes);
    const { rows: passRows } = await sql<{ upload_id: string; test_case_id: string }>`
      select upload_id, test_case_id from test_passes union all
      select upload_id, test_case_id from test_results`.execute(t.db.database.db);
    expect(passRows.map((a) => `${a.upload_id} ${a.test_case_id}`).sort()).toEqual(attempts);

    // 0011 and 0010 down: passes back among the other results.
    const down = await migrator.migrateTo('0009_dashboard');
    expect(down.error).toBeUndefined();
    expect(down.results?.map((r) => r.migrationName)).toEqual(['0011_test_ordinals', '0010_test_passes']);
    expect(await tableExists(t, 'test_passes')).toBe(false);
    expect(await count(t, 'test_results')).toBe(passes + others);
    expect(await count(t, 'test_results', sql`outcome = 'passed'`)).toBe(passes);

    const up = await migrateToLatest(t.db.database);
    expect(up.applied).toEqual(migrationsAfter('0009_dashboard'));
    expect(await tableExists(t, 'test_passes')).toBe(false);
    expect(await countPasses(t.db.database.db)).toBe(passes);
    expect(await count(t, 'test_results')).toBe(others);
    expect(await pairs()).toEqual(attempts);
    expect(await blobs()).toEqual(blobsBefore);
    expect(await answers()).toEqual(before);
  });
});
