import { repoFullName, testCaseId } from '../../domain/testid/index.ts';
import { findRepo } from '../../store/repos.ts';
import { findTestCases } from '../../store/test-cases.ts';
import { quarantinedIds } from '../../store/test-lists.ts';
import type { AppContext, Caller } from '../context.ts';
import { checkOrgSlug, type RepoRef, repoKey } from '../repositories.ts';
import { loadHealthSettings } from './settings.ts';

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
 */
export async function quarantineConfig(
  ctx: AppContext,
  caller: Caller,
  body: { repo: RepoRef; orgUrlSlug: string; testIdentifiers?: TestIdentifier[] | undefined },
): Promise<{ isDisabled: boolean; testIds: string[] }> {
  checkOrgSlug(caller, body.orgUrlSlug);
  const repository = await findRepo(ctx.db, caller.orgId, repoKey(body.repo));
  if (repository === undefined) return { isDisabled: false, testIds: [] };
  const settings = await loadHealthSettings(ctx.db, repository.id);
  const isDisabled = !settings.quarantine.quarantiningEnabled;
  const identifiers = body.testIdentifiers ?? [];
  if (identifiers.length === 0)
    return { isDisabled, testIds: await quarantinedIds(ctx.db, repository.id, ALL_QUARANTINED_LIMIT) };
  const fullName = repoFullName(repository);
  const ids = identifiers.map((t) =>
    t.id && UUID.test(t.id)
      ? t.id.toLowerCase()
      : testCaseId({
          orgSlug: caller.orgSlug,
          repoFullName: fullName,
          name: t.name ?? null,
          parent: t.parentName ?? null,
          classname: t.className ?? null,
          file: t.file ?? null,
          variant: t.variant ?? '',
        }),
  );
  const rows = await findTestCases(ctx.db, repository.id, [...new Set(ids)]);
  return { isDisabled, testIds: rows.filter((r) => r.quarantined === 1).map((r) => r.id) };
}
