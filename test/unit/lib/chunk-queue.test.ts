import { describe, expect, it } from 'vitest';
import { ChunkQueue } from '../../../src/lib/chunk-queue.ts';

describe('ChunkQueue', () => {
  it('yields pushed chunks in order, waiting for more until ended', async () => {
    const queue = new ChunkQueue(() => {}, 'taken');
    queue.push(Uint8Array.of(1));
    const read = (async () => {
      const seen: number[] = [];
      for await (const chunk of queue) seen.push(...chunk);
      return seen;
    })();
    await Promise.resolve();
    queue.push(Uint8Array.of(2, 3));
    queue.end();
    expect(await read).toEqual([1, 2, 3]);
  });

  it("gives credit when a chunk is taken, or ('done') only once the consumer asks for the next", async () => {
    for (const when of ['taken', 'done'] as const) {
      const credits: string[] = [];
      const queue = new ChunkQueue(() => credits.push('credit'), when);
      queue.push(Uint8Array.of(1));
      queue.push(Uint8Array.of(2));
      queue.end();
      const iterator = queue[Symbol.asyncIterator]();
      await iterator.next();
      expect(credits.length, when).toBe(when === 'taken' ? 1 : 0);
      await iterator.next();
      await iterator.next();
      expect(credits.length, when).toBe(2);
    }
  });
});
