import { describe, expect, it } from 'vitest';
import { createProtoStream, isValidMessage } from '../../../src/lib/protobuf-stream.ts';

/** A length-delimited field: tag (field, wire type 2), length, bytes (all lengths below 128). */
const field = (number: number, body: Uint8Array | string): Uint8Array => {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return Uint8Array.from([(number << 3) | 2, bytes.length, ...bytes]);
};
const concat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

describe('protobuf stream', () => {
  // A root with field 1 twice (each holding field 1 messages) and a field 2 to skip.
  const runA = field(3, 'a');
  const runB = field(3, 'bb');
  const root = concat(
    field(1, concat(field(1, runA), field(2, 'x'))),
    field(2, 'skip'),
    field(1, field(1, runB)),
  );

  it('hands over each message at the path, however the input is split', () => {
    for (const size of [1, 2, 5, root.length]) {
      const messages: number[][] = [];
      const stream = createProtoStream({
        path: [1, 1],
        maxMessageBytes: 64,
        onMessage: (bytes) => {
          messages.push([...bytes]);
          return undefined;
        },
      });
      for (let at = 0; at < root.length; at += size)
        expect(stream.push(root.subarray(at, at + size))).toBeUndefined();
      expect(stream.end()).toBeUndefined();
      expect(messages).toEqual([[...runA], [...runB]]);
    }
  });

  it('refuses input that ends inside a field, and a message above the size limit', () => {
    const cut = createProtoStream({ path: [1, 1], maxMessageBytes: 64, onMessage: () => undefined });
    expect(cut.push(root.subarray(0, 4))).toBeUndefined();
    expect(cut.end()).toEqual(expect.any(String));
    const small = createProtoStream({ path: [1, 1], maxMessageBytes: 2, onMessage: () => undefined });
    expect(small.push(root)).toEqual(expect.any(String));
  });

  it('checks a message against a shape', () => {
    const shape = { 1: { 1: { 3: 'string' } }, 2: 'string' } as const;
    expect(isValidMessage(root, shape)).toBe(true);
    expect(isValidMessage(root, { 2: 'varint' })).toBe(false);
    expect(isValidMessage(root.subarray(0, root.length - 1), shape)).toBe(false);
  });
});
