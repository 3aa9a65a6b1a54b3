// A file whose attempts arrive in batches (from a parser thread, or internal.bin's decoding thread):
// the request thread derives each batch (derive.ts) and, with a preparation, prepares it for storing
// (upload-prep.ts) while the next one is being parsed.
import type { JunitAttempt, JunitFileSummary } from '../../../domain/junit/index.ts';
import type { Derivation } from './derive.ts';
import type { Derived, FileRead, IdentityContext, ParsedFile } from './types.ts';
import type { FilePrep, UploadPrep } from './upload-prep.ts';

export class IncomingFile {
  readonly #attempts: JunitAttempt[] = [];
  readonly #derived: Derived = { failures: [], testIds: [] };
  /** Prepares the attempts as they are derived (with an identity only). */
  readonly #prep: FilePrep | undefined;

  constructor(
    private readonly derivation: Derivation,
    private readonly identity: IdentityContext | undefined,
    private readonly upload: UploadPrep | undefined,
  ) {
    this.#prep = identity === undefined ? undefined : upload?.file();
  }

  /** The next attempts, as parsed (they count only if the file's summary is ok). */
  add(batch: readonly JunitAttempt[]): void {
    for (const a of batch) this.#attempts.push(a);
    const from = this.#derived.failures.length;
    this.derivation.into(this.#derived, batch, this.identity);
    this.#prep?.add(batch, this.#derived, from);
  }

  /**
   * The file, once parsed: a rejected file ingests nothing (its provisional batches are dropped);
   * an accepted one is attached to the upload's preparation.
   */
  finish(name: string, summary: JunitFileSummary, read: FileRead | undefined): ParsedFile {
    const identity = this.identity;
    const ok = summary.ok;
    const { failures, testIds } = ok ? this.#derived : { failures: [], testIds: [] };
    const file: ParsedFile = {
      name,
      summary,
      attempts: ok ? this.#attempts : [],
      failures,
      ...(identity === undefined ? {} : { ids: { identity, testIds } }),
      ...(read === undefined ? {} : { read }),
    };
    if (ok && this.#prep !== undefined) this.upload?.attach(file, this.#prep);
    return file;
  }
}
