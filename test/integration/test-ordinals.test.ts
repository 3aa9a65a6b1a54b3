// Every test has an ordinal of its own within its repository (migration 0011): 0, 1, 2, … in the
// order the repository first saw its tests, kept for good, continued by later uploads, and given
// to existing tests by the migration in first-seen order.
import { beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { migrationsAfter, migratorOf } from '../support/migrations.ts';
import { repositoryRow, storedTestsOf } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const WEB = { host: 'github.com', owner: 'acme', name: 'web' };
const API = { host: 'github.com', owner: 'acme', name: 'api' };
const CUSTOM = 'a6e84936-3ee9-57d5-b041-ae124896f654';

describe('test ordinals', () => {
  const t = useTestApp({ now: () => now });
  let globex: string;
  let now = Date.parse('2026-11-20T10:00:00Z');

  const ordinals = async (repo: typeof WEB) => ({
    rows: await storedTestsOf(t, repo),
    next: Number((await repositoryRow(t, repo)).test_ordinals),
  });
  const send = async (repo: typeof WEB, names: string[], token = t.orgToken, org = 'acme') => {
    now += 60_000;
    const res = await upload(
      t,
      token,
      [{ name: 'r.xml', content: junitXml(names.map((name) => ({ name }))) }],
      {
        repo,
        org,
      },
    );
    expect(res.statusCode).toBe(200);
  };

  beforeAll(async () => {
    globex = await t.token('globex');
  });

  it('numbers a repository’s tests from 0 and continues with the next upload’s new tests', async () => {
    await send(WEB, ['c', 'a', 'b']);
    const first = await ordinals(WEB);
    expect(first.rows.map((r) => r.ordinal)).toEqual([0, 1, 2]);
    expect(first.next).toBe(3);

    await send(WEB, ['a', 'b', 'c', 'e', 'd']);
    const second = await ordinals(WEB);
    // Known tests keep theirs; the new ones come after.
    for (const r of first.rows) expect(second.rows.find((x) => x.id === r.id)?.ordinal).toBe(r.ordinal);
    expect(second.rows.map((r) => r.ordinal)).toEqual([0, 1, 2, 3, 4]);
    expect(second.rows.slice(3).map((r) => r.name)).toEqual(['d', 'e']);
    expect(second.next).toBe(5);

    // Another repository counts on its own.
    await send(API, ['x', 'y']);
    expect((await ordinals(API)).rows.map((r) => r.ordinal)).toEqual([0, 1]);
  });

  it('gives a test re-derived for a second repository (a custom id taken) an ordinal there', async () => {
    const custom = `<testsuite name="s"><testcase name="shared" id="${CUSTOM}"/></testsuite>`;
    const globexRepo = { host: 'github.com', owner: 'globex', name: 'web' };
    for (const [token, org, repo] of [
      [t.orgToken, 'acme', WEB],
      [globex, 'globex', globexRepo],
    ] as const) {
      const res = await upload(t, token, [{ name: 'c.xml', content: custom }], { repo, org });
      expect(res.statusCode).toBe(200);
    }
    const acmeRows = await ordinals(WEB);
    expect(acmeRows.rows.find((r) => r.id === CUSTOM)?.ordinal).toBe(5);
    const theirs = await ordinals(globexRepo);
    expect(theirs.rows).toHaveLength(1);
    expect(theirs.rows[0]?.id).not.toBe(CUSTOM);
    expect(theirs.rows[0]?.ordinal).toBe(0);
  });

  it('numbers existing tests by first seen, then id, when the migration runs', async () => {
    const before = await ordinals(WEB);
    const migrator = migratorOf(t.db.database.db);
    const down = await migrator.migrateTo('0010_test_passes');
    expect(down.error).toBeUndefined();
    expect(down.results?.map((r) => r.migrationName)).toEqual(migrationsAfter('0010_test_passes').reverse());
    const up = await migrateToLatest(t.db.database);
    expect(up.applied).toEqual(migrationsAfter('0010_test_passes'));
    const after = await ordinals(WEB);
    const expected = [...before.rows]
      .sort((x, y) => x.first_seen_at - y.first_seen_at || (x.id < y.id ? -1 : 1))
      .map((r, i) => ({ id: r.id, ordinal: i }));
    expect(after.rows.map((r) => ({ id: r.id, ordinal: r.ordinal }))).toEqual(expected);
    expect(after.next).toBe(before.rows.length);
    // And uploads go on from there.
    await send(WEB, ['f']);
    const more = await ordinals(WEB);
    expect(more.rows.find((r) => r.name === 'f')?.ordinal).toBe(before.rows.length);
  });
});
