// Messages between the request thread (pool.ts) and a parser thread (worker.ts).
import type { AttemptBudget, FileRead, ParsedFile } from '../prepare/types.ts';
import type { EncodedAttempts } from './codec.ts';

/** Messages to a parser thread. */
export type ToParser =
  /** A new file: its chunks follow, then `end`. */
  | {
      kind: 'open';
      id: number;
      name: string;
      maxBytes: number;
      budget: AttemptBudget | undefined;
    }
  /** The next bytes of file `id`. */
  | { kind: 'chunk'; id: number; bytes: Uint8Array }
  /** File `id` has no more bytes. */
  | { kind: 'end'; id: number };

/** Messages from a parser thread. */
export type FromParser =
  /** One chunk of file `id` was parsed: another may be sent. */
  | { kind: 'consumed'; id: number }
  /** The next attempts of file `id`, as parsed (they count only if its summary is ok). */
  | { kind: 'attempts'; id: number; batch: EncodedAttempts }
  /** File `id` is parsed (or rejected, as parseJunitFile rejects: a summary with one error). */
  | {
      kind: 'parsed';
      id: number;
      name: string;
      summary: ParsedFile['summary'];
      read: FileRead | undefined;
    }
  /** Parsing file `id` threw (a bug): the request fails. */
  | { kind: 'failed'; id: number; message: string };
