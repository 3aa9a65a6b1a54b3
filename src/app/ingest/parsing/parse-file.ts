// Reading one uploaded JUnit file: its bytes (plain or gzip, capped) streamed through the parser,
// and the attempts an upload's files may hold together. A parser thread runs this (worker.ts), or
// the request thread when there are none (pool.ts).
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import {
  type AttemptWriter,
  createJunitParser,
  DEFAULT_JUNIT_LIMITS,
  type JunitAttempt,
} from '../../../domain/junit/index.ts';
import type { AttemptBudget, FileRead, ParsedFile } from '../prepare/types.ts';

/**
 * The attempts one upload's files may hold together (MAINLINE_MAX_UPLOAD_ATTEMPTS): parsed
 * attempts stay in memory until the upload is stored, so a request of many large files must not
 * take them all. A file that would go past the limit gets a per-file error; the others still ingest.
 */
export class UploadAttempts {
  #held = 0;

  constructor(readonly limit: number) {}

  /** What the next file may add. */
  budget(): AttemptBudget {
    return { left: Math.max(0, this.limit - this.#held), limit: this.limit };
  }

  /** Counts a parsed file's attempts (a rejected file holds none) and returns it. */
  add(file: ParsedFile): ParsedFile {
    this.#held += file.attempts.length;
    return file;
  }
}

const EMPTY_COUNTS = { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 };

function failed(name: string, message: string, read?: FileRead): ParsedFile {
  return {
    name,
    summary: { ok: false, counts: EMPTY_COUNTS, problems: [{ severity: 'error', message }] },
    attempts: [],
    ...(read === undefined ? {} : { read }),
  };
}

class TooLarge extends Error {}

/**
 * The file's bytes, gunzipped when they start with gzip's magic number, capped at maxBytes. Bytes
 * are inflated only as they are asked for: a consumer that stops (the parser rejected the file)
 * stops the inflating too, and the compressed bytes left are never inflated.
 */
async function* plainBytes(source: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done === true) return;
  const head = first.value;
  async function* all() {
    yield head;
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value;
  }
  const gzip = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  const stream: AsyncIterable<Uint8Array> = gzip ? Readable.from(all()).pipe(createGunzip()) : all();
  let total = 0;
  for await (const chunk of stream) {
    total += chunk.length;
    if (total > maxBytes) throw new TooLarge();
    yield chunk;
  }
}

/**
 * Streams one JUnit file (plain or gzip) through the parser. Memory is bounded by the attempts the
 * file holds, never by its size. A file that is malformed, too large or not gzip after all gets one
 * error problem and no attempts; the caller still ingests the other files. With a `budget`, so does
 * a file with more attempts than its upload may still hold.
 */
export async function parseJunitFile(input: {
  name: string;
  source: AsyncIterable<Uint8Array>;
  maxBytes: number;
  budget?: AttemptBudget | undefined;
  /**
   * Receives the attempts in batches as they are parsed instead of the result's `attempts` (then
   * empty), or one at a time (an AttemptWriter: JunitParserOptions' `writer`); like the parser's,
   * they count only if the returned summary is ok.
   */
  sink?: ((batch: JunitAttempt[]) => void) | AttemptWriter;
  /** For a sink that copies each batch out at once (worker.ts): JunitParserOptions'. */
  stream?: { batchSize: number; keepSlices: boolean };
}): Promise<ParsedFile> {
  const { name, source, maxBytes, budget, sink, stream } = input;
  const attempts: JunitAttempt[] = [];
  let plain = 0;
  const read = (overCap: boolean): FileRead => ({ plainBytes: plain, overCap });
  const binding = budget !== undefined && budget.left < DEFAULT_JUNIT_LIMITS.maxAttempts;
  const parser = createJunitParser({
    ...stream,
    onAttempts:
      typeof sink === 'function'
        ? sink
        : (batch) => {
            for (const attempt of batch) attempts.push(attempt);
          },
    ...(typeof sink === 'object' ? { writer: sink } : {}),
    ...(binding
      ? {
          limits: { maxAttempts: budget.left },
          attemptsLimitMessage: `this file would take the upload past ${budget.limit} test attempts, the most one upload may hold (MAINLINE_MAX_UPLOAD_ATTEMPTS): send it in an upload of its own`,
        }
      : {}),
  });
  try {
    let sawBytes = false;
    for await (const chunk of plainBytes(source, maxBytes)) {
      sawBytes = true;
      plain += chunk.length;
      parser.write(chunk);
      // Rejected (malformed, a limit): the rest of the file would be inflated for nothing.
      if (parser.rejected) break;
    }
    if (!sawBytes) return failed(name, 'the file is empty', read(false));
  } catch (error) {
    if (error instanceof TooLarge)
      return failed(name, `the file is larger than ${maxBytes} bytes (after decompression)`, read(true));
    return failed(name, `the file could not be read: ${(error as Error).message}`, read(false));
  }
  const summary = parser.close();
  // A rejected file ingests nothing, so it counts nothing (what the parser saw before the error is
  // not in the upload's totals).
  if (!summary.ok)
    return { name, summary: { ...summary, counts: EMPTY_COUNTS }, attempts: [], read: read(false) };
  return { name, summary, attempts, read: read(false) };
}
