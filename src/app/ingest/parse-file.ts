import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { createJunitParser, type JunitAttempt, type JunitFileSummary } from '../../domain/junit/index.ts';
import type { FailureFacts, IdentityContext } from './derive.ts';

/** One uploaded file after parsing: its attempts are kept only when the file is ok. */
export interface ParsedFile {
  readonly name: string;
  readonly summary: JunitFileSummary;
  readonly attempts: JunitAttempt[];
  /** Per attempt: its failure's facts, null unless it failed (derive.ts; absent: not derived yet). */
  readonly failures?: readonly (FailureFacts | null)[];
  /**
   * Per attempt: its test id for `identity`, and the attempts' indexes ordered by test id (absent:
   * the identity was not known while parsing).
   */
  readonly ids?: {
    readonly identity: IdentityContext;
    readonly testIds: readonly string[];
    readonly order: Int32Array;
  };
}

const EMPTY_COUNTS = { testcases: 0, attempts: 0, failures: 0, skipped: 0, retries: 0 };

function failed(name: string, message: string): ParsedFile {
  return {
    name,
    summary: { ok: false, counts: EMPTY_COUNTS, problems: [{ severity: 'error', message }] },
    attempts: [],
  };
}

class TooLarge extends Error {}

/** The file's bytes, gunzipped when they start with gzip's magic number, capped at maxBytes. */
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
 * error problem and no attempts; the caller still ingests the other files.
 */
export async function parseJunitFile(
  name: string,
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<ParsedFile> {
  const attempts: JunitAttempt[] = [];
  const parser = createJunitParser({
    onAttempts: (batch) => {
      for (const attempt of batch) attempts.push(attempt);
    },
  });
  try {
    let sawBytes = false;
    for await (const chunk of plainBytes(source, maxBytes)) {
      sawBytes = true;
      parser.write(chunk);
    }
    if (!sawBytes) return failed(name, 'the file is empty');
  } catch (error) {
    if (error instanceof TooLarge)
      return failed(name, `the file is larger than ${maxBytes} bytes (after decompression)`);
    return failed(name, `the file could not be read: ${(error as Error).message}`);
  }
  const summary = parser.close();
  return { name, summary, attempts: summary.ok ? attempts : [] };
}
