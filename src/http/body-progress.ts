// Cutting request bodies that stop arriving (MAINLINE_BODY_STALL_SECONDS). MAINLINE_REQUEST_TIMEOUT
// bounds a whole request; this bounds a pause: a client that sends nothing for that long is answered
// 408 and its connection closed, instead of holding the request (and what it holds) until the
// request timeout. Only the time the server spends waiting for the client's next bytes counts: while
// the server is busy with bytes it already has (parsing, waiting for an ingest turn), the client is
// held back by TCP, not stalled.
import type { Readable } from 'node:stream';
import { AppError } from '../domain/errors.ts';

/** The 408 of a stalled body; the connection is closed after it (the rest of the body is not read). */
export function stalledError(seconds: number): AppError {
  return new AppError(
    'REQUEST_TIMEOUT',
    `No bytes of the request body arrived for ${seconds} s (MAINLINE_BODY_STALL_SECONDS): the request was cut off and nothing was stored; send the body without pausing`,
    { headers: { connection: 'close' } },
  );
}

/**
 * Yields what `source` yields, but throws stalledError when the next item takes longer than
 * `seconds` to arrive. A consumer that stops early ends `source` as usual; after a stall, `source`
 * is left to `onStall` (e.g. to destroy it), since its pending read cannot be cancelled.
 */
export async function* untilStalled<T>(
  source: AsyncIterable<T>,
  seconds: number,
  onStall?: () => void,
): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let open = true;
  try {
    for (;;) {
      const next = iterator.next();
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<'stalled'>((resolve) => {
        timer = setTimeout(() => resolve('stalled'), seconds * 1000);
      });
      const result = await Promise.race([next, stalled]).finally(() => clearTimeout(timer));
      if (result === 'stalled') {
        open = false;
        // The read still pending fails when the connection closes: nobody waits for it.
        next.catch(() => {});
        onStall?.();
        throw stalledError(seconds);
      }
      if (result.done === true) {
        open = false;
        return;
      }
      yield result.value;
    }
  } finally {
    if (open) await iterator.return?.();
  }
}

/**
 * A request body's chunks, failing with stalledError when they stop arriving for `seconds`. A
 * consumer that stops early (a 413) leaves the request stream as it is, so the answer can still be
 * sent on its connection (which the answer then closes).
 */
export function bodyChunks(body: Readable, seconds: number): AsyncIterable<Uint8Array> {
  return untilStalled<Uint8Array>(
    { [Symbol.asyncIterator]: () => body.iterator({ destroyOnReturn: false }) },
    seconds,
  );
}
