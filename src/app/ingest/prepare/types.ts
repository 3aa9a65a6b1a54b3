// The types an upload passes through on its way in: its meta, its files as parsed, its attempts as
// identified, and what a preparation is made against. They are here, apart from the code, so that
// receiving, parsing, preparing and storing each import them from one place and none of those
// modules has to import another for a type (no import circle).
import type { CodeownersRule } from '../../../domain/codeowners/index.ts';
import type { JunitAttempt, JunitFileSummary } from '../../../domain/junit/index.ts';
import type { SeenTestCase, TestCaseRow } from '../../../store/tests/cases.ts';
import type { RepoRef } from '../../repositories.ts';

/** The `meta` of an upload (docs/upload-contract.md), already validated against its schema. */
export interface UploadMeta {
  repo: RepoRef;
  org_url_slug: string;
  branch: string;
  commit_sha: string;
  pr_number?: number | undefined;
  pr_title?: string | undefined;
  job_name?: string | undefined;
  job_url?: string | undefined;
  variant?: string | undefined;
  run_attempt?: number | undefined;
  codeowners?: string | undefined;
  upload_key?: string | undefined;
}

/** Everything besides the attempt itself that goes into a test id. */
export interface IdentityContext {
  readonly orgSlug: string;
  /** `<host>/<owner>/<name>` as the repository is stored. */
  readonly repoFullName: string;
  readonly variant: string;
}

/** Fingerprint and summary of a failure (domain/failures), and the key its text is stored under. */
export interface FailureFacts {
  readonly fingerprint: string;
  readonly summary: string;
  readonly textHash: string;
}

/** One uploaded file after parsing: its attempts are kept only when the file is ok. */
export interface ParsedFile {
  readonly name: string;
  readonly summary: JunitFileSummary;
  readonly attempts: JunitAttempt[];
  /** Per attempt: its failure's facts, null unless it failed (derive.ts; absent: not derived yet). */
  readonly failures?: readonly (FailureFacts | null)[];
  /** Per attempt: its test id for `identity` (absent: the identity was not known while parsing). */
  readonly ids?: {
    readonly identity: IdentityContext;
    readonly testIds: readonly string[];
  };
  /**
   * What reading the file took: the bytes handed to the parser (after decompression), and whether
   * it was refused for going past the `maxBytes` it was read with (absent: not read, e.g. refused
   * before parsing).
   */
  readonly read?: FileRead;
}

export interface FileRead {
  readonly plainBytes: number;
  readonly overCap: boolean;
}

/** How many more attempts the upload a file belongs to may hold, and its limit. */
export interface AttemptBudget {
  readonly left: number;
  readonly limit: number;
}

/** Attempts' derived facts, appended batch by batch (derive.ts). */
export interface Derived {
  readonly failures: (FailureFacts | null)[];
  /** Empty when the identity was not known. */
  readonly testIds: string[];
}

/** One attempt with its test identity resolved. */
export interface IdentifiedAttempt {
  readonly testId: string;
  readonly attempt: JunitAttempt;
  readonly at: number;
  /** Its failure's fingerprint and summary (null unless it failed). */
  readonly failure: FailureFacts | null;
}

/** What the seen cache knows of one repository at one version (seen-cache.ts). */
export interface KnownTests {
  /** The seen columns of every test it knows. */
  readonly tests: ReadonlyMap<string, SeenTestCase>;
  /** Whole rows of the tests ingestion re-evaluated last (a test failing run after run is again). */
  readonly full: ReadonlyMap<string, TestCaseRow>;
}

/** What a preparation is made against. */
export interface PrepBasis {
  readonly identity: IdentityContext;
  /** The upload's time: tests first or last seen, attempts without a plausible timestamp. */
  readonly now: number;
  /** The upload's CODEOWNERS rules (undefined: it sent none, owners stay as they are). */
  readonly rules: readonly CodeownersRule[] | undefined;
  /** The repository the known tests are of (undefined: not stored yet), and its health version. */
  readonly repoId: string | undefined;
  readonly version: number;
  readonly known: KnownTests;
}
