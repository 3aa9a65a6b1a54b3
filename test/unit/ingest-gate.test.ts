import { describe, expect, it } from 'vitest';
import { IngestGate } from '../../src/app/ingest/gate.ts';

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('IngestGate', () => {
  it('lets `limit` uploads in at once and the others in arrival order as turns end', async () => {
    const gate = new IngestGate(2);
    const order: string[] = [];
    const leaves = new Map<string, () => void>();
    const enter = (name: string) =>
      gate.enter().then((leave) => {
        order.push(name);
        leaves.set(name, leave);
      });
    for (const name of ['a', 'b', 'c', 'd', 'e']) void enter(name);
    await settle();
    expect(order).toEqual(['a', 'b']);
    expect([gate.active, gate.waiting]).toEqual([2, 3]);
    leaves.get('b')?.();
    leaves.get('b')?.(); // a second call ends nothing more
    await settle();
    expect(order).toEqual(['a', 'b', 'c']);
    expect([gate.active, gate.waiting]).toEqual([2, 2]);
    leaves.get('a')?.();
    leaves.get('c')?.();
    await settle();
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    leaves.get('d')?.();
    leaves.get('e')?.();
    expect([gate.active, gate.waiting]).toEqual([0, 0]);
  });

  it('ends the turn of work that fails', async () => {
    const gate = new IngestGate(1);
    await expect(gate.run(async () => Promise.reject(new Error('bad body')))).rejects.toThrow('bad body');
    expect(await gate.run(async () => 'next')).toBe('next');
    expect(gate.active).toBe(0);
  });

  it('refuses a limit below one', () => {
    expect(() => new IngestGate(0)).toThrow('limit must be ≥ 1');
  });
});
