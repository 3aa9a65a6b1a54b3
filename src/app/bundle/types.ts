import type { RepoRef } from '../../domain/ci-env.ts';
import type { JunitAttempt, JunitFileSummary } from '../../domain/junit/index.ts';

export type { RepoRef };

/** Caps that keep reading one bundle within bounded memory and time. */
export interface BundleLimits {
  /** Decompressed bytes of the whole tar (every entry, headers and padding included). */
  readonly maxTotalBytes: number;
  /** Bytes of any one tar entry, as its header declares (checked before its data is read). */
  readonly maxFileBytes: number;
  /** Tar entries of any kind (files, directories, links…). */
  readonly maxEntries: number;
  /** Bytes of meta.json, which is parsed in memory. */
  readonly maxMetaBytes: number;
  /** Bytes of the CODEOWNERS entry; a larger one is skipped with a problem. */
  readonly maxCodeownersBytes: number;
  /**
   * zstd window a frame may declare. The decoder allocates the window a frame declares, so this
   * bounds its memory. 8 MiB covers zstd levels ≤ 19 (the analytics CLI compresses at level 15, a
   * 4 MiB window); `--long`/`--ultra` frames are refused.
   */
  readonly maxWindowBytes: number;
  /**
   * Test case runs the bundle's internal.bin may hold (MAINLINE_MAX_UPLOAD_ATTEMPTS: it is then the
   * upload's only file); more refuse that file, with a problem.
   */
  readonly maxInternalRuns: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = {
  maxTotalBytes: 512 * MiB,
  maxFileBytes: 100 * MiB,
  maxEntries: 10_000,
  maxMetaBytes: 32 * MiB,
  maxCodeownersBytes: 4 * MiB,
  maxWindowBytes: 8 * MiB,
  maxInternalRuns: 500_000,
};

/** Why a bundle was refused, for mapping onto an HTTP status. */
export type BundleErrorCode =
  /** Not a zstd (or gzip, or plain) tar at all: 415. */
  | 'unsupported_format'
  /** Truncated or damaged zstd, gzip or tar data: 400. */
  | 'corrupt'
  /** A size, entry-count or zstd-window limit was passed: 413. */
  | 'too_large'
  /** meta.json is missing, not JSON, or does not say which repository and commit: 400. */
  | 'invalid_meta';

/** The outcome of one step of reading. */
export type Verdict =
  /** Carry on. */
  | { readonly ok: true }
  /** Stop: the bundle is refused. */
  | { readonly ok: false; readonly code: BundleErrorCode; readonly error: string };

export type Failure = Extract<Verdict, { ok: false }>;

export const OK: Verdict = { ok: true };

export function fail(code: BundleErrorCode, error: string): Failure {
  return { ok: false, code, error };
}

/** A JUnit file meta.json lists (a `files[]` item of a `Junit` file set). */
export interface BundleJunitFileRef {
  /** Path of the entry inside the tar, e.g. `junit/0`. */
  readonly path: string;
  /** Where the CLI found the file on the CI machine (absolute). */
  readonly originalPath?: string;
  /** The same, relative to the repository root (CLI ≥ 0.5.33). */
  readonly originalPathRel?: string;
}

/** What Mainline's ingestion needs from a bundle's meta.json (field names follow the upload contract). */
export interface BundleUploadMeta {
  readonly repo: RepoRef;
  /** meta.json `org`: the organization URL slug the CLI was given. */
  readonly orgSlug?: string;
  readonly repoUrl?: string;
  readonly branch?: string;
  readonly commitSha: string;
  /** Seconds since the epoch. */
  readonly commitEpoch?: number;
  readonly commitMessage?: string;
  readonly authorName?: string;
  readonly authorEmail?: string;
  readonly prNumber?: number;
  readonly prTitle?: string;
  readonly jobName?: string;
  readonly jobUrl?: string;
  readonly runAttempt?: number;
  readonly variant?: string;
  /** Content of the bundle's CODEOWNERS entry, when it carries one. */
  readonly codeowners?: string;
  /** Where the CLI found CODEOWNERS on the CI machine (meta.json `codeowners.path`). */
  readonly codeownersPath?: string;
  /** meta.json `upload_time_epoch`: seconds since the epoch. */
  readonly uploadTimeEpoch?: number;
  readonly testCommand?: string;
  readonly cliVersion?: string;
  /** `bundle_upload_id_v2`, else `bundle_upload_id`: the id createBundleUpload returned. */
  readonly bundleUploadId?: string;
  readonly tags: readonly { readonly key: string; readonly value: string }[];
  /** The CI environment variables the CLI recorded (string values only). */
  readonly envs: Readonly<Record<string, string>>;
  /** JUnit files listed in meta.json; empty when it lists none (then every `*.xml` entry is used). */
  readonly junitFiles: readonly BundleJunitFileRef[];
  /**
   * The tar entry of the CLI's protobuf test report: meta.json's `internal_bundled_file.path`, else
   * the first file of an `Internal` file set (absent: an entry named `internal.bin` is taken).
   */
  readonly internalFile?: string;
}

/** A JUnit file read from the bundle. */
export interface BundleFile {
  /** Path inside the tar, normalised (no `./`), e.g. `junit/0`. */
  readonly name: string;
  readonly originalPath?: string;
  readonly bytes: Uint8Array;
}

/** The bundle's internal.bin, decoded (domain/internal-bin). */
export interface BundleInternalFile {
  /** Path of the entry inside the tar, e.g. `internal.bin` or `internal/0`. */
  readonly name: string;
  readonly summary: JunitFileSummary;
  /** Its runs as attempts; empty unless the summary is ok. */
  readonly attempts: readonly JunitAttempt[];
}

/** The container the bytes came in. */
export type BundleFormat = 'tar+zstd' | 'tar+gzip' | 'tar';

/**
 * A bundle that was read: its JUnit files (`File`) and internal.bin (`Internal`) as the reader keeps
 * them; `problems` lists what was skipped or odd but did not refuse it.
 */
export interface BundleRead<File, Internal> {
  readonly ok: true;
  readonly format: BundleFormat;
  /** meta.json, with the CODEOWNERS entry's content when the bundle has one. */
  readonly meta: BundleUploadMeta;
  /** meta.json as parsed, for debugging. */
  readonly rawMeta: Readonly<Record<string, unknown>>;
  /** The files to ingest, in order (meta.json's, else the tar's). */
  readonly files: readonly File[];
  /**
   * internal.bin, when it is the source of the bundle's test results: the bundle has no JUnit file
   * (then `files` is empty). Absent: its attempts are not ingested.
   */
  readonly internal?: Internal;
  readonly problems: readonly string[];
}

/** A bundle read into memory, or refused (then nothing in it should be ingested). */
export type BundleResult = BundleRead<BundleFile, BundleInternalFile> | Failure;

export { formatBytes } from '../../lib/archive/verdict.ts';
