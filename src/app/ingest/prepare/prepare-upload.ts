// Where an upload's preparation is made: once its meta is known, before its files are parsed
// (prepareUpload), and again in the ingest transaction when that one no longer holds (settle). Both
// make it the same way (newPrep), and both prepare attempts through FilePrep.add (upload-prep.ts).
import { type CodeownersRule, parseCodeowners } from '../../../domain/codeowners/index.ts';
import { repoFullName } from '../../../domain/testid/index.ts';
import { findRepo } from '../../../store/tenancy/repos.ts';
import type { AppContext, Caller } from '../../context.ts';
import { assertForgeGranted } from '../../forge-grants.ts';
import { repoKey } from '../../repositories.ts';
import { NOTHING_KNOWN } from './seen-cache.ts';
import type { IdentityContext, KnownTests, ParsedFile, UploadMeta } from './types.ts';
import { type FilePrep, UploadPrep } from './upload-prep.ts';

/** The upload's CODEOWNERS rules (undefined: it sent none, owners stay as they are). */
export function rulesOf(meta: UploadMeta): readonly CodeownersRule[] | undefined {
  return meta.codeowners === undefined ? undefined : parseCodeowners(meta.codeowners).rules;
}

/** A preparation against the tests the seen cache knows of `repoId` at `version`. */
function newPrep(
  ctx: AppContext,
  basis: {
    identity: IdentityContext;
    now: number;
    rules: readonly CodeownersRule[] | undefined;
    repoId: string | undefined;
    version: number;
  },
): UploadPrep {
  const known =
    basis.repoId === undefined ? NOTHING_KNOWN : ctx.caches.seenTests.lookup(basis.repoId, basis.version);
  return new UploadPrep({ ...basis, known }, ctx.caches.derivation);
}

/**
 * The identity an upload's tests will most likely get, and what the upload most likely knows of
 * them, for its files to be prepared while they are parsed: the repository as stored (ids use its
 * stored spelling), else as the upload names it, and the seen cache at its health version.
 * ingestUpload checks the preparation against the repository it locks (settle), and prepares again
 * what no longer holds.
 */
export async function prepareUpload(ctx: AppContext, caller: Caller, meta: UploadMeta): Promise<UploadPrep> {
  await assertForgeGranted(ctx, caller, meta.repo);
  const stored = await findRepo(ctx.db, caller.orgId, repoKey(meta.repo));
  return newPrep(ctx, {
    identity: {
      orgSlug: caller.orgSlug,
      repoFullName: repoFullName(stored ?? meta.repo),
      variant: meta.variant ?? '',
    },
    now: ctx.now(),
    rules: rulesOf(meta),
    repoId: stored?.id,
    version: stored === undefined ? -1 : Number(stored.health_version),
  });
}

/** What ingestion stores an upload's files by (settle). */
export interface Settled {
  /** The preparation used: the one made while parsing if it still holds, else one made now. */
  readonly prep: UploadPrep;
  /** Each file's preparation. */
  readonly files: FilePrep[];
  /**
   * The tests known at the version the transaction found: remembered after the commit with this
   * upload's rows (a stale base would outlive the change that made it stale).
   */
  readonly known: KnownTests;
}

/** When an upload is stored, and by which CODEOWNERS rules: its preparation's, else from its meta now. */
export function startOf(
  ctx: AppContext,
  meta: UploadMeta,
  made: UploadPrep | undefined,
): { now: number; rules: readonly CodeownersRule[] | undefined } {
  return made?.basis ?? { now: ctx.now(), rules: rulesOf(meta) };
}

/**
 * In the ingest transaction, the repository `repoId` locked at `version`: the preparation made while
 * the files were parsed if it still holds (usableFor), else a new one (same time and rules) against
 * the tests known now; and every file prepared by it. A preparation that resolved no known test may
 * be older than `version`: it is used, but the tests known are then the cache's at `version`.
 */
export function settle(
  ctx: AppContext,
  made: UploadPrep | undefined,
  at: {
    repoId: string;
    version: number;
    identity: IdentityContext;
    now: number;
    rules: readonly CodeownersRule[] | undefined;
  },
  files: readonly ParsedFile[],
): Settled {
  const { repoId, version, identity } = at;
  const prep =
    made?.usableFor(repoId, version, identity) === true
      ? made
      : newPrep(ctx, { identity, now: at.now, rules: at.rules, repoId, version });
  const current = prep.basis.repoId === repoId && prep.basis.version === version;
  const known = current ? prep.basis.known : ctx.caches.seenTests.lookup(repoId, version);
  return { prep, files: prep.prepared(files), known };
}
