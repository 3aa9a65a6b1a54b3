import { repoFullName, testCaseId } from '../../domain/testid/index.ts';
import { findQuarantineRepo } from '../../store/tenancy/quarantine-repo.ts';
import { findTestCases } from '../../store/tests/cases.ts';
import { quarantinedIds } from '../../store/tests/lists.ts';
import type { AppContext, Caller } from '../context.ts';
import { checkOrgSlug, type RepoRef, repoKey } from '../repositories.ts';
import { allQuarantinedBytes, quarantinedAmong } from './quarantine-index.ts';

/** A test as trunk-analytics-cli describes it to getQuarantineConfig (mixed casing, as upstream). */
export interface TestIdentifier {
  name?: string | null | undefined;
  parentName?: string | null | undefined;
  className?: string | null | undefined;
  file?: string | null | undefined;
  id?: string | null | undefined;
  variant?: string | null | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Without identifiers, the answer lists the repository's quarantined tests, up to this many. */
const ALL_QUARANTINED_LIMIT = 10_000;

/**
 * Which of the given tests are quarantined (all of the repository's when none are given), and whether
 * quarantining is off. A repository never uploaded to has no quarantined tests: it answers an empty
 * list rather than 404, so the uploader's fail-safe is not triggered for a brand-new repository.
 * Answered from the repository's quarantined ids kept at its health version (quarantine-index.ts):
 * 1,000 test ids cost set lookups, not 1,000 rows. The given tests' ids come back in id order.
 * Without identifiers the answer is its JSON bytes, kept with the index (allQuarantinedBytes).
 */
export async function quarantineConfig(
  ctx: AppContext,
  caller: Caller,
  body: { repo: RepoRef; orgUrlSlug: string; testIdentifiers?: TestIdentifier[] | undefined },
): Promise<{ isDisabled: boolean; testIds: string[] } | Buffer> {
  checkOrgSlug(caller, body.orgUrlSlug);
  // The repository, its settings and its version in one statement: the index is at least as new.
  // Read again only once something was committed since (UnchangedReads; every call on PostgreSQL).
  const key = repoKey(body.repo);
  const repository = await ctx.caches.unchanged.get(
    ctx.db,
    JSON.stringify(['quarantine', caller.orgId, key.hostKey, key.ownerKey, key.nameKey]),
    () => findQuarantineRepo(ctx.db, caller.orgId, key),
  );
  if (repository === undefined) return { isDisabled: false, testIds: [] };
  const isDisabled = !repository.quarantiningEnabled;
  const index = await ctx.caches.quarantineIndex.at(ctx.db, repository.id, repository.version);
  const identifiers = body.testIdentifiers ?? [];
  if (identifiers.length === 0) {
    // The answer's JSON bytes, kept with the index (made once per health version and isDisabled).
    if (index !== undefined) return allQuarantinedBytes(index, isDisabled, ALL_QUARANTINED_LIMIT);
    return { isDisabled, testIds: await quarantinedIds(ctx.db, repository.id, ALL_QUARANTINED_LIMIT) };
  }
  const fullName = repoFullName(repository);
  const unique = ctx.caches.identifierIds.uniqueIds(
    `${repository.id}|${caller.orgSlug}|${fullName}`,
    identifiers,
    (i) => identityKey(identifiers[i] as TestIdentifier),
    (i) => {
      const t = identifiers[i] as TestIdentifier;
      return t.id && UUID.test(t.id)
        ? t.id.toLowerCase()
        : testCaseId({
            orgSlug: caller.orgSlug,
            repoFullName: fullName,
            name: t.name ?? null,
            parent: t.parentName ?? null,
            classname: t.className ?? null,
            file: t.file ?? null,
            variant: t.variant ?? '',
          });
    },
  );
  // A copy of the kept list (a few ids), so what the caller gets is its own.
  if (index !== undefined) return { isDisabled, testIds: [...quarantinedAmong(index, unique)] };
  const quarantined = (await findTestCases(ctx.db, repository.id, [...unique]))
    .filter((r) => r.quarantined === 1)
    .map((r) => r.id);
  return { isDisabled, testIds: quarantined.sort(byId) };
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * What a test's id is made of besides its repository, unambiguously: a UUID `id` (used as it is), or
 * the name, parent, class name and file (their lengths say where each ends) and the variant; null
 * and '' make the same id.
 */
function identityKey(t: TestIdentifier): string {
  if (t.id && UUID.test(t.id)) return `u${t.id}`;
  const name = t.name ?? '';
  const parent = t.parentName ?? '';
  const classname = t.className ?? '';
  const file = t.file ?? '';
  return `${name.length},${parent.length},${classname.length},${file.length}:${name}${parent}${classname}${file}${t.variant ?? ''}`;
}
