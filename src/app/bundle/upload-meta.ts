/** BundleUploadMeta → the snake_case `meta` of POST /v1/test-results/upload (docs/upload-contract.md). */
import type { UploadMeta } from '../ingest/prepare/types.ts';
import { NO_BRANCH } from './meta.ts';
import type { BundleUploadMeta } from './types.ts';

/** The upload contract's `meta`: ingestion takes a bundle's meta exactly as a multipart upload's. */
export type BundleAsUploadMeta = UploadMeta;

export type UploadMetaOutcome =
  /** Ready for ingestion. */
  | { readonly ok: true; readonly meta: BundleAsUploadMeta }
  /** A field the contract requires is missing. */
  | { readonly ok: false; readonly error: string };

/**
 * `orgSlug` is the organization the upload is for (from the token / createBundleUpload), which wins
 * over meta.json's `org`; `upload_key` is the bundle's upload id, so a re-sent bundle is a duplicate.
 */
export function toUploadMeta(meta: BundleUploadMeta, orgSlug?: string): UploadMetaOutcome {
  const org = orgSlug ?? meta.orgSlug;
  if (org === undefined) return { ok: false, error: 'meta.json names no organization (org)' };
  if (meta.branch === undefined) return { ok: false, error: NO_BRANCH };
  const optional: Partial<BundleAsUploadMeta> = {
    pr_number: meta.prNumber,
    pr_title: meta.prTitle,
    job_name: meta.jobName,
    job_url: meta.jobUrl,
    variant: meta.variant,
    run_attempt: meta.runAttempt,
    codeowners: meta.codeowners,
    upload_key: meta.bundleUploadId,
  };
  const present = Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined));
  return {
    ok: true,
    meta: { repo: meta.repo, org_url_slug: org, branch: meta.branch, commit_sha: meta.commitSha, ...present },
  };
}
