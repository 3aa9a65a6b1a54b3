// The code-owner index (test_owners, migration 0032): `test_cases.codeowners` as one row per test and
// owner, written wherever codeowners is (cases.ts, under the same health lock and transaction), so the
// two never disagree. The dashboard's owner filters read it (store/dashboard/).
import type { Insertable } from 'kysely';
import { insertMany, keyChunks, type Queryable } from '../../db/bulk.ts';
import type { TestOwnersTable } from '../schema.ts';

type OwnerRow = Insertable<TestOwnersTable>;

/** What the index needs of a test. */
export interface OwnedTest {
  readonly id: string;
  readonly repo_id: string;
  readonly name: string;
  readonly ordinal: number;
  /** JSON array of owners. */
  readonly codeowners: string;
}

/** The index rows of these tests: one per distinct owner of each. */
function ownerRows(tests: readonly OwnedTest[]): OwnerRow[] {
  // Most tests share a handful of owner lists: each JSON text is parsed once.
  const parsed = new Map<string, readonly string[]>();
  const out: OwnerRow[] = [];
  for (const t of tests) {
    let owners = parsed.get(t.codeowners);
    if (owners === undefined) {
      owners = [...new Set(JSON.parse(t.codeowners) as string[])];
      parsed.set(t.codeowners, owners);
    }
    for (const owner of owners)
      out.push({ repo_id: t.repo_id, owner, name: t.name, test_id: t.id, ordinal: t.ordinal });
  }
  return out;
}

/**
 * Inserts index rows in key order: each owner's rows then go in at a few places of the B-tree, one
 * after the other, instead of all over it.
 */
async function insertOwners(db: Queryable, rows: OwnerRow[]): Promise<void> {
  if (rows.length === 0) return;
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  rows.sort((a, b) => order(a.owner, b.owner) || order(a.name, b.name) || order(a.test_id, b.test_id));
  await insertMany(db, 'test_owners', rows);
}

/** Adds the index rows of tests just inserted. */
export function addOwners(db: Queryable, tests: readonly OwnedTest[]): Promise<void> {
  return insertOwners(db, ownerRows(tests));
}

/**
 * Moves the index rows of the repository's tests `ids` from the owners their rows hold now to
 * `codeowners` (JSON): call before writing codeowners. Pairs that stay are left alone.
 */
export async function replaceOwners(
  db: Queryable,
  repoId: string,
  codeowners: string,
  ids: readonly string[],
): Promise<void> {
  const gone: OwnerRow[] = [];
  const added: OwnerRow[] = [];
  for (const part of keyChunks(db, ids)) {
    const rows = await db
      .selectFrom('test_cases')
      .select(['id', 'repo_id', 'name', 'ordinal', 'codeowners'])
      .where('id', 'in', part)
      .execute();
    const ours = rows.filter((r) => r.repo_id === repoId);
    const was = ownerRows(ours);
    const now = ownerRows(ours.map((r) => ({ ...r, codeowners })));
    const key = (r: OwnerRow) => `${r.owner}\n${r.test_id}`;
    const kept = new Set(now.map(key));
    const had = new Set(was.map(key));
    gone.push(...was.filter((r) => !kept.has(key(r))));
    added.push(...now.filter((r) => !had.has(key(r))));
  }
  // By owner: each statement reads that owner's range by name and test id (the key), however many
  // tests the owner has.
  const byOwner = new Map<string, OwnerRow[]>();
  for (const r of gone) {
    const rows = byOwner.get(r.owner);
    if (rows === undefined) byOwner.set(r.owner, [r]);
    else rows.push(r);
  }
  for (const [owner, rows] of byOwner) {
    for (const part of keyChunks(db, rows)) {
      await db
        .deleteFrom('test_owners')
        .where('repo_id', '=', repoId)
        .where('owner', '=', owner)
        .where('name', 'in', [...new Set(part.map((r) => r.name))])
        .where(
          'test_id',
          'in',
          part.map((r) => r.test_id),
        )
        .execute();
    }
  }
  await insertOwners(db, added);
}

/** Marks that known tests' owners changed (repositories.owners_version). */
export async function bumpOwnersVersion(db: Queryable, repoId: string): Promise<void> {
  await db
    .updateTable('repositories')
    .set((eb) => ({ owners_version: eb('owners_version', '+', 1) }))
    .where('id', '=', repoId)
    .execute();
}
