// What the archive readers return at each step: a value rather than an exception, so that a caller's
// own refusals (a size limit, an entry it will not take) travel the same way as a corrupt archive's.
// The error code type is a parameter: a caller adds its own codes to the ones the readers use.

/** Why a reader refused its input. */
export type ArchiveErrorCode =
  /** Not the format the reader reads (e.g. a zstd frame that needs a dictionary). */
  | 'unsupported_format'
  /** Truncated or damaged data. */
  | 'corrupt'
  /** A size limit was passed. */
  | 'too_large';

/** The outcome of one step of reading. */
export type Verdict<C extends string = ArchiveErrorCode> =
  /** Carry on. */
  | { readonly ok: true }
  /** Stop: the input is refused. */
  | { readonly ok: false; readonly code: C; readonly error: string };

export type Failure<C extends string = ArchiveErrorCode> = Extract<Verdict<C>, { ok: false }>;

export const OK: { readonly ok: true } = { ok: true };

export function fail<C extends string>(code: C, error: string): Failure<C> {
  return { ok: false, code, error };
}

/** Thrown inside a decoding pipeline (zstd, gzip) to stop it with a verdict. */
export class DecodeRefused<C extends string = ArchiveErrorCode> extends Error {
  constructor(readonly verdict: Failure<C>) {
    super(verdict.error);
  }
}

const MiB = 1024 * 1024;

/** `n` bytes in the largest binary unit that divides it (for messages about limits). */
export function formatBytes(n: number): string {
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
