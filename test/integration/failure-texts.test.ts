// Failure texts are stored once per distinct text (migration 0013): uploads failing the same way
// share one row, the dashboard still shows each failure's text, the migration moves texts both
// ways (retention deletes the texts no kept failure can have: retention.test.ts).
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { recentFailures } from '../../src/store/dashboard/repo-days.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { migrationsAfter, migratorOf } from '../support/migrations.ts';
import { storedFailureTexts, storedResultsOf, storedTestId, storedTestsOf } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const TRACE = 'AssertionError: expected 200, got 500\n    at Object.login (src/login.test.ts:42:7)';
const OTHER = 'TimeoutError: the page did not load in 30000 ms';

describe('failure texts', () => {
  const t = useTestApp();
  const uploads: string[] = [];
  const db = () => t.db.database.db;
  const count = async (table: 'failure_texts' | 'test_results') =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select(({ fn }) => fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const texts = () => storedFailureTexts(t);
  const loginFailures = async () => {
    const test = await storedTestId(t, 'login');
    const fingerprint = await db()
      .selectFrom('test_results')
      .select('failure_fingerprint')
      .where('test_case_id', '=', test)
      .executeTakeFirstOrThrow();
    return (await recentFailures(db(), test, fingerprint.failure_fingerprint, 0, 10)).map(
      (f) => f.failure_text,
    );
  };

  beforeAll(async () => {
    for (const [sha, cases] of [
      [
        'c0ffee01',
        [
          { name: 'login', fail: TRACE },
          { name: 'home', fail: OTHER },
        ],
      ],
      ['c0ffee02', [{ name: 'login', fail: TRACE }, { name: 'home' }]],
    ] as const) {
      const res = await upload(t, t.orgToken, [{ name: 'r.xml', content: junitXml(cases) }], { sha });
      expect(res.statusCode).toBe(200);
      uploads.push(res.json().upload_id);
    }
  });

  it('keeps each distinct text once and shows it with every failure', async () => {
    expect(await count('test_results')).toBe(3);
    expect(await texts()).toEqual([TRACE, OTHER].sort());
    expect(await loginFailures()).toEqual([TRACE, TRACE]);
  });

  it('moves the texts back into the results and out again', async () => {
    const migrator = migratorOf(db());
    const down = await migrator.migrateTo('0012_upload_passes');
    expect(down.error).toBeUndefined();
    const { rows } = await sql<{ failure_text: string | null }>`
      select failure_text from test_results order by failure_text`.execute(db());
    expect(rows.map((r) => r.failure_text)).toEqual([TRACE, TRACE, OTHER].sort());
    const up = await migrateToLatest(t.db.database);
    expect(up.applied).toEqual(migrationsAfter('0012_upload_passes'));
    expect(await texts()).toEqual([TRACE, OTHER].sort());
    expect(await loginFailures()).toEqual([TRACE, TRACE]);
  });
});

describe('failure texts and branch names with characters JSON escapes', () => {
  const t = useTestApp();

  it('stores texts with quotes, backslashes and escapes as sent, and a lone surrogate as one U+FFFD', async () => {
    // PostgreSQL receives bulk rows as JSON (db/bulk.ts): what JSON escapes must come back as it was.
    const odd = 'expected "a\\b" got \'c\'\\ud800 \\\\u0041 tab\there 🙂 {"json": [1, 2]}';
    const res = await upload(
      t,
      t.orgToken,
      [
        {
          name: 'odd.xml',
          content: junitXml([{ name: 'odd', fail: odd.replace(/&/g, '&amp;').replace(/</g, '&lt;') }]),
        },
      ],
      {
        sha: 'c0ffee09',
        branch: 'feature/\ud800x',
      },
    );
    expect(res.statusCode).toBe(200);
    expect(await storedFailureTexts(t)).toEqual([odd]);
    const [row] = await storedResultsOf(t, res.json().upload_id);
    // The edge makes a lone surrogate U+FFFD (SQLite's driver would otherwise store three).
    expect(row?.branch).toBe('feature/\ufffdx');
    // A JSON body too: a ticket id cut in the middle of an emoji.
    const failed: string = res.json().failed_tests[0].test_case_id;
    const link = await t.post(
      '/v1/flaky-tests/link-ticket-to-test-case',
      {
        repo: { host: 'github.com', owner: 'acme', name: 'web' },
        test_case_id: failed,
        external_ticket_id: 'KAN-\ud83d',
      },
      t.orgToken,
    );
    expect(link.statusCode).toBe(200);
    const test = (await storedTestsOf(t, { owner: 'acme', name: 'web' })).find((c) => c.id === failed);
    expect(test?.ticket_id).toBe('KAN-\ufffd');
  });
});
