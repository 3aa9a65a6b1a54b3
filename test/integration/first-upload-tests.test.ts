// A repository's first tests (store/tests/cases.ts upsertTestCases): a repository without tests reads
// no test rows before inserting its upload's (none can be its own); ids another repository holds
// (custom ids) are still given back to the caller to re-derive, and the repository's tests are
// numbered without gaps.
import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { findTestCases, upsertTestCases } from '../../src/store/tests/cases.ts';
import { inTransaction } from '../../src/store/transaction.ts';
import { repositoryRow, storedTestsOf } from '../support/reads.ts';
import { upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const WEB = { host: 'github.com', owner: 'acme', name: 'web' };
/** A custom v5 test id (used as is): acme's web sends it first. */
const CUSTOM = 'a6e84936-3ee9-57d5-b041-ae124896f654';
const withCustom = (names: string[]) =>
  `<testsuite name="s">${names.map((n) => `<testcase name="${n}"/>`).join('')}<testcase name="shared" id="${CUSTOM}"/></testsuite>`;

describe('a repository’s first tests', () => {
  const t = useTestApp();
  let globex: string;

  beforeAll(async () => {
    globex = await t.token('globex');
    const res = await upload(t, t.orgToken, [{ name: 'a.xml', content: withCustom(['a']) }], { repo: WEB });
    expect(res.statusCode).toBe(200);
  });

  it('reads no test rows before inserting them', async () => {
    const db = t.db.database.db;
    const web = await repositoryRow(t, WEB);
    const [template] = await findTestCases(db, web.id, [CUSTOM]);
    const { ordinal: _ordinal, ...rest } = template as NonNullable<typeof template>;
    const repoId = randomUUID();
    await db
      .insertInto('repositories')
      .values({ ...web, id: repoId, name: 'fresh', name_key: 'fresh', test_ordinals: 0, health_version: 0 })
      .execute();
    const tables: string[] = [];
    const reads: KyselyPlugin = {
      transformQuery: ({ node }) => {
        if (node.kind === 'SelectQueryNode') tables.push(JSON.stringify(node.from));
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const ids = [randomUUID(), randomUUID()];
    const { byIndex } = await inTransaction(db.withPlugin(reads), (trx) =>
      upsertTestCases(trx, {
        repoId,
        ids,
        build: (id) => ({ ...rest, id, repo_id: repoId, name: `new ${id}` }),
      }),
    );
    expect(byIndex.map((r) => r?.id)).toEqual(ids);
    expect(byIndex.map((r) => r?.ordinal).sort()).toEqual([0, 1]);
    expect(tables.filter((from) => from.includes('"test_cases"'))).toEqual([]);
  });

  it('re-derives ids another repository holds and numbers the rest without gaps', async () => {
    const repo = { host: 'github.com', owner: 'globex', name: 'web' };
    const res = await upload(t, globex, [{ name: 'a.xml', content: withCustom(['b', 'c']) }], {
      repo,
      org: 'globex',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().counts.test_cases).toBe(3);
    const theirs = await storedTestsOf(t, repo);
    expect(theirs.map((r) => r.ordinal).sort()).toEqual([0, 1, 2]);
    expect(theirs.map((r) => r.id)).not.toContain(CUSTOM);
    expect(theirs.map((r) => r.name).sort()).toEqual(['b', 'c', 'shared']);
    expect(Number((await repositoryRow(t, repo)).test_ordinals)).toBe(3);
    // acme's test keeps its id and ordinal.
    const acme = await storedTestsOf(t, WEB);
    expect(acme.find((r) => r.id === CUSTOM)?.ordinal).toBe(1);
    // And the next upload finds the same tests.
    const again = await upload(t, globex, [{ name: 'a.xml', content: withCustom(['b', 'c', 'd']) }], {
      repo,
      org: 'globex',
      sha: 'later',
    });
    expect(again.statusCode).toBe(200);
    const after = await storedTestsOf(t, repo);
    expect(after.map((r) => r.ordinal).sort()).toEqual([0, 1, 2, 3]);
    for (const r of theirs) expect(after.find((x) => x.id === r.id)?.ordinal).toBe(r.ordinal);
  });
});
