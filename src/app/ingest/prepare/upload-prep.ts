// Preparing an upload's attempts for storing. The request thread derives each batch of attempts a
// parser thread sends (test ids, failure facts: derive.ts) while the thread parses on; here it also
// resolves each attempt against the tests the upload most likely knows (the seen cache at the
// repository's health version when the upload began) and turns known tests' passes into the entries
// that are stored. Ingestion (ingest.ts) then only has the rest to do in its transaction: tests that
// were not known, the writes, health. A preparation is used only if the repository is still at the
// version it was made at (no test row changed since), else ingestion prepares the files again from
// their attempts, in its transaction, through the same FilePrep.add (prepare-upload.ts settle).
import { ownersFor } from '../../../domain/codeowners/index.ts';
import type { JunitAttempt } from '../../../domain/junit/index.ts';
import { SEEN_PRECISION_MS, type SeenTestCase } from '../../../store/tests/cases.ts';
import { PassList } from '../../../store/uploads/pass-codec.ts';
import { type Derivation, sameIdentity } from './derive.ts';
import type { FailureFacts, IdentifiedAttempt, IdentityContext, ParsedFile, PrepBasis } from './types.ts';

/** Attempt timestamps more than 30 days old or over an hour ahead are runner defaults: use the upload time. */
const OLDEST_PLAUSIBLE_MS = 30 * 24 * 3_600_000;
const FUTURE_SLACK_MS = 3_600_000;

function attemptTime(attempt: JunitAttempt, now: number): number {
  const t = attempt.timestamp;
  return t !== null && t >= now - OLDEST_PLAUSIBLE_MS && t <= now + FUTURE_SLACK_MS ? t : now;
}

export function duration(a: JunitAttempt): number | null {
  return a.durationMs === null ? null : Math.round(a.durationMs);
}

/** One upload's preparation: its files' (FilePrep), and what they share. */
export class UploadPrep {
  readonly #ownersByFile = new Map<string, string>();
  /** Known tests' rows as this upload leaves them, where that differs (seen again, new owners). */
  readonly #changed = new Map<string, SeenTestCase>();
  readonly #files = new WeakMap<ParsedFile, FilePrep>();
  /** Attempts resolved to a known test's row (0: the preparation holds nothing version-bound). */
  resolved = 0;

  constructor(
    readonly basis: PrepBasis,
    /** Derives what a file parsed without its identity lacks (prepareWhole). */
    readonly derivation: Derivation,
  ) {}

  /** Starts preparing one file (its attempts are added as they are parsed). */
  file(): FilePrep {
    return new FilePrep(this);
  }

  /** Records that `prep` prepared `file` (which parsed fine). */
  attach(file: ParsedFile, prep: FilePrep): void {
    this.#files.set(file, prep);
  }

  /** The preparation of `file`, if it was prepared while it was parsed. */
  preparedOf(file: ParsedFile): FilePrep | undefined {
    return this.#files.get(file);
  }

  /**
   * Whether ingestion, having locked the repository `repoId` at `version`, may use what was prepared:
   * same identity, and known rows only if no test row has changed since they were read.
   */
  usableFor(repoId: string, version: number, identity: IdentityContext): boolean {
    if (!sameIdentity(this.basis.identity, identity)) return false;
    return this.resolved === 0 || (this.basis.repoId === repoId && this.basis.version === version);
  }

  /** Owners (JSON) of a test in `file` by the upload's CODEOWNERS. */
  ownersOf(file: string | null): string {
    const rules = this.basis.rules ?? [];
    const key = file ?? '';
    let json = this.#ownersByFile.get(key);
    if (json === undefined) {
      json = JSON.stringify(key === '' ? [] : ownersFor(rules, key));
      this.#ownersByFile.set(key, json);
    }
    return json;
  }

  /** Whether this upload rewrites any known test's row (seen again, new owners). */
  rewrites(): boolean {
    return this.#changed.size > 0;
  }

  /** A known test's row as this upload leaves it (seen now, its owners), or undefined if not known. */
  knownRow(testId: string, file: string | null): SeenTestCase | undefined {
    const found = this.basis.known.tests.get(testId);
    if (found === undefined) return undefined;
    if (this.#changed.size > 0) {
      const changed = this.#changed.get(testId);
      if (changed !== undefined) return changed;
    }
    const row = this.seenAgain(found, file);
    if (row !== found) this.#changed.set(testId, row);
    return row;
  }

  /**
   * A stored test's row as this upload leaves it: seen now (when last seen over an hour ago: a row
   * write per test per upload otherwise) and with the owners of its `file` by the upload's CODEOWNERS.
   * `found` itself when neither changes; rows are shared (with the cache), so a change makes a new one.
   */
  seenAgain(found: SeenTestCase, file: string | null): SeenTestCase {
    let row = found;
    const { now } = this.basis;
    if (row.last_seen_at < now - SEEN_PRECISION_MS) row = { ...row, last_seen_at: now };
    if (this.basis.rules !== undefined) {
      const owners = this.ownersOf(file);
      if (owners !== row.codeowners) row = { ...row, codeowners: owners };
    }
    return row;
  }

  /** Prepares a parsed file all at once (one that was not prepared while it was parsed). */
  prepareWhole(file: ParsedFile): FilePrep {
    const prep = this.file();
    const { identity } = this.basis;
    const n = file.attempts.length;
    const derive = this.derivation;
    const ids =
      file.ids !== undefined && sameIdentity(file.ids.identity, identity)
        ? file.ids.testIds
        : file.attempts.map((a) => derive.testId(identity, a));
    const failures = file.failures ?? file.attempts.map((a, k) => derive.failureFacts(a, ids[k]));
    if (n > 0) prep.add(file.attempts, { testIds: ids, failures }, 0);
    return prep;
  }

  /** Each file's preparation: the one made while it was parsed, else one made now. */
  prepared(files: readonly ParsedFile[]): FilePrep[] {
    return files.map((f) => this.preparedOf(f) ?? this.prepareWhole(f));
  }
}

/**
 * A test whose health an upload re-evaluates even if it only passed: one with an active monitor, a
 * manual flag, or not healthy. A healthy test that only passed keeps its status (passes never activate
 * a monitor, unless a 0-threshold one exists).
 */
export function isWatched(row: SeenTestCase): boolean {
  return row.has_active_monitor === 1 || row.manual_flag !== null || row.status !== 'HEALTHY';
}

/** A set of test ordinals (dense per repository): a bit each. */
class OrdinalSet {
  #bits = new Uint8Array(1024);

  /** Adds `n`; false if it was there already. */
  add(n: number): boolean {
    const byte = n >> 3;
    if (byte >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.#bits.length * 2));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    const bit = 1 << (n & 7);
    const had = (this.#bits[byte] as number) & bit;
    this.#bits[byte] = (this.#bits[byte] as number) | bit;
    return had === 0;
  }
}

/** A file's attempts' test ids and failure facts, as far as they were derived. */
interface DerivedSoFar {
  readonly testIds: readonly string[];
  readonly failures: readonly (FailureFacts | null)[];
}

/** One file's attempts, identified and resolved against the known tests as far as they could be. */
export class FilePrep {
  readonly attempts: IdentifiedAttempt[] = [];
  /** The row of each attempt's test, where it was known (undefined: stored or looked up later). */
  readonly rowOf: (SeenTestCase | undefined)[] = [];
  /** The rows of the file's known tests, each once; `changed`: those this upload rewrote. */
  readonly known: SeenTestCase[] = [];
  readonly changed: SeenTestCase[] = [];
  /** Known tests whose health can change without a failure (watched: see `isWatched`). */
  readonly watched: SeenTestCase[] = [];
  /** Known tests' ordinals among `known`. */
  readonly #knownOrdinals = new OrdinalSet();
  /** Each test that was not known: the index of its first attempt. */
  readonly unknown = new Map<string, number>();
  /** Passes of attempts whose test was known. */
  readonly passes = new PassList();
  /** Indexes of the attempts that did not pass (stored as result rows). */
  readonly notPassed: number[] = [];
  /** Indexes of the attempts whose test was not known. */
  readonly unresolved: number[] = [];

  constructor(private readonly upload: UploadPrep) {}

  /**
   * Adds attempts in file order; `derived.testIds[from + k]` and `derived.failures[from + k]` are
   * attempt k's (derived holds the arrays the derivation appends to).
   */
  add(attempts: readonly JunitAttempt[], derived: DerivedSoFar, from: number): void {
    const { testIds, failures } = derived;
    const upload = this.upload;
    const { now, known } = upload.basis;
    let resolved = 0;
    for (let k = 0; k < attempts.length; k++) {
      const attempt = attempts[k] as JunitAttempt;
      const testId = testIds[from + k] as string;
      const at = attemptTime(attempt, now);
      const i = this.attempts.length;
      this.attempts.push({ testId, attempt, at, failure: failures[from + k] ?? null });
      // A known test's row is the same object for each of its attempts (knownRow).
      const row = upload.knownRow(testId, attempt.file);
      this.rowOf.push(row);
      if (row === undefined) {
        this.unresolved.push(i);
        if (!this.unknown.has(testId)) this.unknown.set(testId, i);
      } else {
        resolved++;
        if (this.#knownOrdinals.add(row.ordinal)) {
          this.known.push(row);
          if (upload.rewrites() && row !== known.tests.get(testId)) this.changed.push(row);
          if (isWatched(row)) this.watched.push(row);
        }
      }
      if (attempt.outcome !== 'passed') this.notPassed.push(i);
      else if (row !== undefined) this.passes.push(row.ordinal, at, attempt.retryIndex, duration(attempt));
    }
    upload.resolved += resolved;
  }
}
