// The bundle decoding threads (src/app/bundle/decode-pool.ts): a bundle that inflates to tens of MiB
// is decoded on a thread of its own and handed over only as fast as it is taken, so the request
// thread never holds more than a few MiB of it, however slowly it reads.
import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { BundleDecoders, type BundleEvent } from '../../src/app/bundle/decode-pool.ts';
import {
  chunks,
  concat,
  END_OF_ARCHIVE,
  frameHeader,
  metaJson,
  rawBlock,
  rleBlock,
  tarHeader,
  tarPadding,
} from '../support/bundles.ts';

const MiB = 1024 * 1024;
const BLOCK = 128 * 1024;

/** meta.json, then one JUnit entry of `size` zero bytes as RLE blocks: a few KiB that inflate to `size`. */
function inflatingBundle(size: number): Uint8Array {
  const meta = new TextEncoder().encode(
    metaJson({
      file_sets: [{ file_set_type: 'Junit', glob: '*', files: [{ path: 'junit/0', owners: [] }] }],
    }),
  );
  const parts = [
    frameHeader({ windowLog: 17 }),
    rawBlock(
      concat([
        tarHeader('meta.json', meta.length),
        meta,
        tarPadding(meta.length),
        tarHeader('junit/0', size),
      ]),
    ),
  ];
  for (let left = size; left > 0; left -= BLOCK) parts.push(rleBlock(0, Math.min(BLOCK, left)));
  parts.push(rawBlock(concat([tarPadding(size), END_OF_ARCHIVE]), true));
  return concat(parts);
}

describe('bundle decoding threads', () => {
  const decoders = new BundleDecoders(1);
  afterAll(() => decoders.close());

  it('hands a large entry over only as fast as it is taken, from a thread of its own', async () => {
    const size = 48 * MiB;
    const bundle = inflatingBundle(size);
    expect(bundle.length).toBeLessThan(MiB);
    const decoding = decoders.decode(chunks(bundle, 64 * 1024), {});
    const seen: BundleEvent['kind'][] = [];
    for (;;) {
      const event = await decoding.next();
      seen.push(event.kind);
      if (event.kind === 'file') break;
    }
    expect(seen).toEqual(['meta', 'file']);
    // Nothing is taken for a while: the thread fills its window and then waits.
    await expect.poll(() => decoders.stats.maxQueuedBytes).toBeGreaterThan(0);
    await sleep(300);
    // The thread's window (decode-protocol.ts: 16 messages of ≤ 128 KiB), with room to spare.
    const window = 4 * MiB;
    expect(decoders.stats.maxQueuedBytes).toBeLessThanOrEqual(window);
    let bytes = 0;
    let done: BundleEvent | undefined;
    while (done === undefined) {
      const event = await decoding.next();
      if (event.kind === 'data') bytes += event.bytes.length;
      if (event.kind === 'done') done = event;
    }
    expect(bytes).toBe(size);
    expect(done).toMatchObject({ kind: 'done', outcome: { ok: true, files: [{ name: 'junit/0' }] } });
    expect(decoders.stats.maxQueuedBytes).toBeLessThanOrEqual(window);
    expect(decoders.stats.decodedBytes).toBeGreaterThan(size);
    expect(decoders.stats.lastThreadId).not.toBe(threadId);
  });

  it('stops a decoding the reader gives up on, and decodes the next bundle', async () => {
    const first = decoders.decode(chunks(inflatingBundle(16 * MiB), 64 * 1024), {});
    while ((await first.next()).kind !== 'file') {
      // until the file starts
    }
    first.abort();
    await expect(first.next()).rejects.toThrow(/stopped/);
    const second = decoders.decode(chunks(inflatingBundle(MiB), 4096), {});
    let last: BundleEvent;
    do last = await second.next();
    while (last.kind !== 'done');
    expect(last).toMatchObject({ outcome: { ok: true } });
    expect(decoders.stats.decodes).toBe(3);
  });
});
