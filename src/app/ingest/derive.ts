// What ingestion derives from each attempt before storing it: the test's id (a SHA-1 per attempt)
// and, for a failure, its fingerprint and summary (normalising its text). Both are pure and cost
// about half a second per 100k attempts (far less for a suite seen before), so the request thread
// derives each batch of attempts a parser thread sends while that thread parses on (parser-pool.ts),
// and ingestion only checks they were derived for the right identity.
import { describeFailure } from '../../domain/failures/index.ts';
import type { JunitAttempt } from '../../domain/junit/index.ts';
import { failureTextHash } from '../../store/failure-texts.ts';
import { Lru } from '../lru.ts';
import { type AttemptBudget, type ParsedFile, parseJunitFile } from './parse-file.ts';
import { TestIdMemo } from './test-id-memo.ts';

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

export function sameIdentity(a: IdentityContext, b: IdentityContext): boolean {
  return a.orgSlug === b.orgSlug && a.repoFullName === b.repoFullName && a.variant === b.variant;
}

/** This thread's remembered test ids (a suite uploaded again has the same tests). */
const memo = new TestIdMemo();

export function attemptTestId(identity: IdentityContext, a: JunitAttempt): string {
  return memo.id(identity, a);
}

/** The text a failure is stored and grouped by. */
export function failureText(a: JunitAttempt): string {
  return a.failureText ?? a.failureMessage ?? a.failureType ?? 'Failed without a message';
}

/**
 * Failure facts of the failure texts seen last, per thread: a broken test fails the same way run
 * after run, and normalising a 40-line stack trace costs ~40 µs. describeFailure is a function of
 * the text alone, so they are kept by text; and by test: a lookup by text hashes the whole text (a
 * fresh string each upload, ~10 µs for a stack trace), one by the test's id (a string the id memo
 * hands out again, its hash kept) costs a comparison of the texts. Both share their entries: at
 * most 12,000 texts (a stack trace is a few KB; 8,000 characters at most).
 */
const MAX_FAILING_TESTS = 10_000;
/** Texts seen last, whichever test failed with them (many tests can fail with one text). */
const MAX_TEXTS = 2_000;

/** A failure text (the first copy seen) and its facts. */
interface Remembered {
  readonly text: string;
  readonly facts: FailureFacts;
}

const rememberedFailures = new Lru<Remembered>(MAX_TEXTS);
const lastFailureOfTest = new Lru<Remembered>(MAX_FAILING_TESTS);

/** The attempt's failure facts (null unless it failed); `testId`, when known, makes a repeat cheaper. */
export function failureFacts(a: JunitAttempt, testId?: string): FailureFacts | null {
  if (a.outcome !== 'failed') return null;
  const text = failureText(a);
  const last = testId === undefined ? undefined : lastFailureOfTest.get(testId);
  if (last !== undefined && last.text === text) return last.facts;
  let remembered = rememberedFailures.get(text);
  if (remembered === undefined) {
    remembered = { text, facts: { ...describeFailure(text), textHash: failureTextHash(text) } };
    rememberedFailures.set(text, remembered);
  }
  if (testId !== undefined) lastFailureOfTest.set(testId, remembered);
  return remembered.facts;
}

/**
 * Appends the attempts' failure facts and, when the identity is known, their test ids to `into`
 * (attempts arrive in batches from a parser thread; the request thread derives each batch meanwhile).
 */
export function deriveInto(
  into: { failures: (FailureFacts | null)[]; testIds: string[] },
  attempts: readonly JunitAttempt[],
  identity: IdentityContext | undefined,
): void {
  if (identity === undefined) {
    for (const a of attempts) into.failures.push(failureFacts(a));
    return;
  }
  for (const a of attempts) {
    const testId = attemptTestId(identity, a);
    into.testIds.push(testId);
    into.failures.push(failureFacts(a, testId));
  }
}

/** The file with its attempts' failure facts and, when the identity is known, their test ids. */
export function deriveFile(file: ParsedFile, identity: IdentityContext | undefined): ParsedFile {
  const derived: { failures: (FailureFacts | null)[]; testIds: string[] } = { failures: [], testIds: [] };
  deriveInto(derived, file.attempts, identity);
  const { failures, testIds } = derived;
  return identity === undefined ? { ...file, failures } : { ...file, failures, ids: { identity, testIds } };
}

/** Parses one file and derives what ingestion needs from it: what a parser thread does per file. */
export async function parseAndDerive(
  name: string,
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
  identity: IdentityContext | undefined,
  budget?: AttemptBudget,
): Promise<ParsedFile> {
  return deriveFile(await parseJunitFile(name, source, maxBytes, budget), identity);
}
