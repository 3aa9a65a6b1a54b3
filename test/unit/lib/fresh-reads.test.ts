// FreshReads shares a read among concurrent callers of one key, but only a read started after they
// all asked: a caller arriving while a read runs gets the next read's value, never the running one's.
import { describe, expect, it } from 'vitest';
import { FreshReads } from '../../../src/lib/fresh-reads.ts';

/** A source whose reads are settled by hand, in order, recording how many were started. */
function manualSource() {
  const pending: { resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  let started = 0;
  return {
    read: (): Promise<number> => {
      started++;
      return new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
    },
    get started() {
      return started;
    },
    /** Settles the oldest unsettled read with `value` (or the error), then lets callbacks run. */
    async settle(value: number | Error) {
      const next = pending.shift();
      if (next === undefined) throw new Error('no read is running');
      if (value instanceof Error) next.reject(value);
      else next.resolve(value);
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
  };
}

describe('FreshReads', () => {
  it('gives callers arriving during a read the next read, shared, and never the running one', async () => {
    const reads = new FreshReads<number>();
    const source = manualSource();
    const first = reads.run('k', source.read);
    expect(source.started).toBe(1);
    // Two callers arrive while the first read runs: they wait for one read started after it settles.
    const joiners = [reads.run('k', source.read), reads.run('k', source.read)];
    expect(source.started).toBe(1);
    await source.settle(1);
    expect(await first).toBe(1);
    expect(source.started).toBe(2);
    // A caller arriving while that second read runs gets a third one.
    const late = reads.run('k', source.read);
    await source.settle(2);
    expect(await Promise.all(joiners)).toEqual([2, 2]);
    expect(source.started).toBe(3);
    await source.settle(3);
    expect(await late).toBe(3);
    expect(source.started).toBe(3);
    expect(reads.size).toBe(0);
  });

  it('reads each key on its own', async () => {
    const reads = new FreshReads<number>();
    const a = manualSource();
    const b = manualSource();
    const fromA = reads.run('a', a.read);
    const fromB = reads.run('b', b.read);
    expect([a.started, b.started]).toEqual([1, 1]);
    await b.settle(20);
    await a.settle(10);
    expect([await fromA, await fromB]).toEqual([10, 20]);
    expect(reads.size).toBe(0);
  });

  it("gives a read's error to every caller sharing it, and reads again for the next ones", async () => {
    const reads = new FreshReads<number>();
    const source = manualSource();
    const first = reads.run('k', source.read);
    const joiners = [reads.run('k', source.read), reads.run('k', source.read)];
    const outcomes = Promise.allSettled([first, ...joiners]);
    await source.settle(new Error('first failed'));
    await source.settle(new Error('second failed'));
    const [a, b, c] = await outcomes;
    expect(a).toEqual({ status: 'rejected', reason: new Error('first failed') });
    expect(b).toEqual({ status: 'rejected', reason: new Error('second failed') });
    expect(c).toEqual({ status: 'rejected', reason: new Error('second failed') });
    expect(reads.size).toBe(0);
    const again = reads.run('k', source.read);
    await source.settle(7);
    expect(await again).toBe(7);
    expect(source.started).toBe(3);
  });

  it('takes a read that throws before returning a promise as a failed read', async () => {
    const reads = new FreshReads<number>();
    const thrown = reads.run('k', () => {
      throw new Error('at once');
    });
    await expect(thrown).rejects.toThrow('at once');
    await Promise.resolve();
    expect(reads.size).toBe(0);
    expect(await reads.run('k', async () => 5)).toBe(5);
  });
});
