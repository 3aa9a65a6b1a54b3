/** Messages between the request thread (decode-pool.ts) and a bundle decoding thread (decode-worker.ts). */
import type { JunitFileSummary } from '../../domain/junit/index.ts';
import type { EncodedAttempts } from '../ingest/parsing/codec.ts';
import type { SelectedFile } from './collect.ts';
import type { BundleFormat, BundleLimits, BundleUploadMeta, Failure } from './types.ts';

/** Index in the shared control array: data messages the request thread has taken. */
export const CONTROL_TAKEN = 0;
/** Index in the shared control array: non-zero once the request thread gave up on the job. */
export const CONTROL_ABORTED = 1;
/**
 * Data messages (each ≤ 128 KiB of a zstd block, ≤ 256 KiB of a plain tar) the thread may send before
 * the request thread has taken them: a few MiB at most, however large the bundle inflates.
 */
export const MAX_DATA_IN_FLIGHT = 16;

/** An accepted bundle's outcome, as sent across (without the raw meta.json). */
export type SentOutcome =
  | {
      readonly ok: true;
      readonly format: BundleFormat;
      readonly meta: BundleUploadMeta;
      readonly files: readonly SelectedFile[];
      /** internal.bin's name when it is the bundle's source of test results (extract.ts). */
      readonly internal?: string;
      readonly problems: readonly string[];
    }
  | Failure;

export type ToDecoder =
  /** A new job; its input follows. `control`: an Int32Array(2) over shared memory (see above). */
  | { kind: 'start'; job: number; limits: Partial<BundleLimits>; control: SharedArrayBuffer }
  /** The next compressed bytes. */
  | { kind: 'input'; job: number; bytes: Uint8Array }
  /** No more input. */
  | { kind: 'end'; job: number };

export type FromDecoder =
  /** One input chunk was taken by the decoder: another may be sent. */
  | { kind: 'consumed'; job: number }
  | { kind: 'meta'; job: number; meta: BundleUploadMeta }
  | { kind: 'codeowners'; job: number; text: string }
  /** A JUnit candidate starts; its bytes follow as `data`, then `fileEnd`. */
  | { kind: 'file'; job: number; name: string }
  | { kind: 'data'; job: number; bytes: Uint8Array }
  | { kind: 'fileEnd'; job: number }
  /** internal.bin starts; its decoded runs follow as `attempts` (flow-controlled as `data`), then `internalEnd`. */
  | { kind: 'internal'; job: number; name: string }
  | { kind: 'attempts'; job: number; batch: EncodedAttempts }
  | { kind: 'internalEnd'; job: number; summary: JunitFileSummary }
  /** The bundle was read (or refused); the thread is free again. */
  | { kind: 'done'; job: number; outcome: SentOutcome; decodedBytes: number; threadId: number }
  /** Decoding threw (a bug, or the input broke); the thread is free again. */
  | { kind: 'failed'; job: number; message: string; decodedBytes: number; threadId: number };
