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

  it('gives a freed turn to the waiting organization holding the fewest, never more than its share', async () => {
    const gate = new IngestGate(2);
    const order: string[] = [];
    const leaves: (() => void)[] = [];
    const enter = (org: string, name: string) =>
      gate.enter(org).then((leave) => {
        order.push(name);
        leaves.push(leave);
        return leave;
      });
    const a1 = await enter('A', 'a1');
    const a2 = await enter('A', 'a2');
    // A's further uploads, then B's and C's, wait.
    for (const [org, name] of [
      ['A', 'a3'],
      ['A', 'a4'],
      ['B', 'b1'],
      ['C', 'c1'],
      ['B', 'b2'],
    ] as const)
      void enter(org, name);
    await settle();
    expect([gate.active, gate.waiting]).toEqual([2, 5]);
    a1();
    await settle();
    // B and C hold none, A one: B (the earlier of the two) goes first, though A's waited longest.
    expect(order).toEqual(['a1', 'a2', 'b1']);
    a2();
    await settle();
    // A and C hold none: among equals, the earlier waiter.
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3']);
    expect([gate.heldBy('A'), gate.heldBy('B'), gate.heldBy('C')]).toEqual([1, 1, 0]);
    leaves[2]?.(); // b1
    await settle();
    // C holds none, A one: C goes before A's fourth, though A's waited longer.
    expect(order.at(-1)).toBe('c1');
    leaves[3]?.(); // a3
    await settle();
    expect(order.at(-1)).toBe('a4');
    leaves[4]?.(); // c1
    await settle();
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'c1', 'a4', 'b2']);
    for (const leave of leaves) leave();
    expect([gate.active, gate.waiting]).toEqual([0, 0]);
    expect([gate.heldBy('A'), gate.heldBy('B'), gate.heldBy('C')]).toEqual([0, 0, 0]);
  });

  it('refuses a limit below one', () => {
    expect(() => new IngestGate(0)).toThrow('limit must be ≥ 1');
  });
});
