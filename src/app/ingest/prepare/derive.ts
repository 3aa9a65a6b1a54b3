// What ingestion derives from each attempt before storing it: the test's id (a SHA-1 per attempt)
// and, for a failure, its fingerprint and summary (normalising its text). Both are pure but not free,
// so the request thread derives each batch of attempts a parser thread sends while that thread parses
// on (parsing/pool.ts), and ingestion only checks they were derived for the right identity. What
// makes a repeat cheap (ids and failures seen before) is remembered in one Derivation per app
// (app/caches.ts).
import { describeFailure } from '../../../domain/failures/index.ts';
import type { JunitAttempt } from '../../../domain/junit/index.ts';
import { Lru } from '../../../lib/lru.ts';
import { failureTextHash } from '../../../store/uploads/failure-texts.ts';
import { TestIdMemo } from './test-id-memo.ts';
import type { Derived, FailureFacts, IdentityContext, ParsedFile } from './types.ts';

export function sameIdentity(a: IdentityContext, b: IdentityContext): boolean {
  return a.orgSlug === b.orgSlug && a.repoFullName === b.repoFullName && a.variant === b.variant;
}

/** The text a failure is stored and grouped by. */
export function failureText(a: JunitAttempt): string {
  return a.failureText ?? a.failureMessage ?? a.failureType ?? 'Failed without a message';
}

/** A failure text (the first copy seen) and its facts. */
interface Remembered {
  readonly text: string;
  readonly facts: FailureFacts;
}

/** How much a Derivation remembers (config: MAINLINE_TEST_ID_CACHE, MAINLINE_FAILURE_CACHE). */
export interface DerivationSizes {
  /** Test ids by their identity fields. */
  readonly testIds: number;
  /** Tests whose last failure is remembered by test id. */
  readonly failingTests: number;
  /** Failure texts remembered whichever test failed with them. */
  readonly failureTexts: number;
}

/**
 * Derives test ids and failure facts, remembering the last ones. Test ids by their identity fields
 * (test-id-memo.ts). Failure facts by text, since describeFailure is a function of the text alone
 * and a broken test fails the same way run after run; and by test, since a lookup by text hashes
 * the whole text (a fresh string each upload) while one by the test's id (a string the id memo hands
 * out again, its hash kept) costs a comparison of the texts. Both share their entries.
 */
export class Derivation {
  readonly #ids: TestIdMemo;
  readonly #texts: Lru<Remembered>;
  readonly #lastOfTest: Lru<Remembered>;

  constructor(sizes: DerivationSizes) {
    this.#ids = new TestIdMemo(sizes.testIds);
    this.#texts = new Lru(sizes.failureTexts);
    this.#lastOfTest = new Lru(sizes.failingTests);
  }

  testId(identity: IdentityContext, a: JunitAttempt): string {
    return this.#ids.id(identity, a);
  }

  /** The attempt's failure facts (null unless it failed); `testId`, when known, makes a repeat cheaper. */
  failureFacts(a: JunitAttempt, testId?: string): FailureFacts | null {
    if (a.outcome !== 'failed') return null;
    const text = failureText(a);
    const last = testId === undefined ? undefined : this.#lastOfTest.get(testId);
    if (last !== undefined && last.text === text) return last.facts;
    let remembered = this.#texts.get(text);
    if (remembered === undefined) {
      remembered = { text, facts: { ...describeFailure(text), textHash: failureTextHash(text) } };
      this.#texts.set(text, remembered);
    }
    if (testId !== undefined) this.#lastOfTest.set(testId, remembered);
    return remembered.facts;
  }

  /**
   * Appends the attempts' failure facts and, when the identity is known, their test ids to `into`
   * (attempts arrive in batches from a parser thread; the request thread derives each batch meanwhile).
   */
  into(into: Derived, attempts: readonly JunitAttempt[], identity: IdentityContext | undefined): void {
    if (identity === undefined) {
      for (const a of attempts) into.failures.push(this.failureFacts(a));
      return;
    }
    for (const a of attempts) {
      const testId = this.testId(identity, a);
      into.testIds.push(testId);
      into.failures.push(this.failureFacts(a, testId));
    }
  }

  /** The file with its attempts' failure facts and, when the identity is known, their test ids. */
  file(file: ParsedFile, identity: IdentityContext | undefined): ParsedFile {
    const derived: Derived = { failures: [], testIds: [] };
    this.into(derived, file.attempts, identity);
    const { failures, testIds } = derived;
    return identity === undefined ? { ...file, failures } : { ...file, failures, ids: { identity, testIds } };
  }
}
