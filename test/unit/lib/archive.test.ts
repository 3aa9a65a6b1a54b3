// The tar and zstd readers on their own, with archives written by tar-stream and node:zlib.
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { zstdCompressSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import {
  type EntryDecision,
  type TarEntry,
  TarReader,
  type TarVisitor,
} from '../../../src/lib/archive/tar.ts';
import { OK, type Verdict } from '../../../src/lib/archive/verdict.ts';
import { createZstdStages } from '../../../src/lib/archive/zstd.ts';
import { ZstdFrameScanner } from '../../../src/lib/archive/zstd-frames.ts';

async function tarOf(entries: { name: string; text: string }[]): Promise<Uint8Array> {
  const archive = pack();
  for (const { name, text } of entries) archive.entry({ name }, text);
  archive.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of archive) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

/** Keeps every entry's text; `refuse` names an entry to refuse. */
class Collect implements TarVisitor<'refused'> {
  readonly files = new Map<string, string>();
  private name = '';
  private parts: Buffer[] = [];
  constructor(private readonly refuse?: string) {}
  entry(entry: TarEntry): EntryDecision<'refused'> {
    if (entry.name === this.refuse) return { ok: false, code: 'refused', error: `no ${entry.name}` };
    this.name = entry.name;
    this.parts = [];
    return { ok: true, keep: entry.type === 'file' };
  }
  data(bytes: Uint8Array): Verdict<'refused'> {
    this.parts.push(Buffer.from(bytes));
    return OK;
  }
  entryEnd(): Verdict<'refused'> {
    this.files.set(this.name, Buffer.concat(this.parts).toString('utf8'));
    return OK;
  }
}

function read(bytes: Uint8Array, visitor: Collect, pieceSize: number): Verdict<string> {
  const reader = new TarReader(visitor);
  for (let at = 0; at < bytes.length; at += pieceSize) {
    const verdict = reader.push(bytes.subarray(at, at + pieceSize));
    if (!verdict.ok) return verdict;
  }
  return reader.end();
}

describe('TarReader', () => {
  it('reads every entry, long (pax) names included, however the bytes are split', async () => {
    const long = `${'deep/'.repeat(40)}report.xml`;
    const bytes = await tarOf([
      { name: 'meta.json', text: '{"a":1}' },
      { name: long, text: '<testsuite/>' },
    ]);
    for (const size of [1, 511, 512, 100_000]) {
      const visitor = new Collect();
      expect(read(bytes, visitor, size)).toEqual({ ok: true });
      expect(Object.fromEntries(visitor.files)).toEqual({ 'meta.json': '{"a":1}', [long]: '<testsuite/>' });
    }
  });

  it("stops at the visitor's refusal and at a truncated archive", async () => {
    const bytes = await tarOf([
      { name: 'a', text: 'x' },
      { name: 'b', text: 'y' },
    ]);
    expect(read(bytes, new Collect('b'), 512)).toEqual({ ok: false, code: 'refused', error: 'no b' });
    expect(read(bytes.subarray(0, 700), new Collect(), 512)).toEqual({
      ok: false,
      code: 'corrupt',
      error: 'truncated tar archive: the data ends inside entry "a"',
    });
  });
});

describe('zstd', () => {
  const limits = { maxWindowBytes: 8 * 1024 * 1024, maxTotalBytes: 64 * 1024 * 1024 };

  it('decodes a stream through the header check', async () => {
    const text = 'abc'.repeat(100_000);
    const compressed = zstdCompressSync(Buffer.from(text));
    const out: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.push(chunk);
        done();
      },
    });
    await pipeline(Readable.from([compressed]), ...createZstdStages(limits), sink);
    expect(Buffer.concat(out).toString()).toBe(text);
  });

  it('refuses a frame whose window is above the limit before decoding it', () => {
    // Magic number, a frame header descriptor with no flags, then a window descriptor for 16 MiB.
    const compressed = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 14 << 3]);
    const verdict = new ZstdFrameScanner({ ...limits, maxWindowBytes: 1024 * 1024 }).scan(compressed);
    expect(verdict).toEqual({
      ok: false,
      code: 'too_large',
      error: 'zstd window of 16 MiB exceeds the limit of 1 MiB (compress without --long/--ultra)',
    });
  });

  it('refuses a stream that ends inside a frame', () => {
    const compressed = zstdCompressSync(Buffer.from('hello'));
    const scanner = new ZstdFrameScanner(limits);
    expect(scanner.scan(compressed.subarray(0, 6))).toEqual({ ok: true });
    expect(scanner.end()).toEqual({
      ok: false,
      code: 'corrupt',
      error: 'truncated zstd data: the stream ends inside a frame',
    });
  });
});
