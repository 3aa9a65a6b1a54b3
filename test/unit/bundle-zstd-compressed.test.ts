// Bundles compressed by a real zstd encoder (node:zlib's, the library trunk-analytics-cli's `zstd`
// crate wraps), not the stored blocks the other bundle tests write by hand: compressed blocks and a
// content checksum, streamed as the analytics CLI does (a streaming encoder, so no content size in
// the frame header) at its level, 15 (trunk-io/analytics-cli bundle/src/bundler.rs at fcbc1bd2,
// BundlerUtil::make_tarball).
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { constants, createZstdCompress, zstdCompressSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { extractBundle } from '../../src/app/bundle/index.ts';
import { buildTar, chunks, junitFixture, metaJson, refused } from '../support/bundles.ts';

const MiB = 1024 * 1024;

async function zstd(data: Uint8Array, params: Record<number, number> = {}): Promise<Uint8Array> {
  const encoder = createZstdCompress({
    params: { [constants.ZSTD_c_compressionLevel]: 15, [constants.ZSTD_c_checksumFlag]: 1, ...params },
  });
  return new Uint8Array(await buffer(Readable.from([data]).pipe(encoder)));
}

/** JUnit-like text that compresses well but not to nothing: `bytes` long. */
function report(bytes: number): Uint8Array {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `<testcase classname="pkg.Suite${i % 97}" name="case ${i}" time="0.${i % 1000}"/>\n`;
    lines.push(line);
    size += line.length;
  }
  return new TextEncoder().encode(lines.join('').slice(0, bytes));
}

describe('extractBundle: zstd from a real encoder', () => {
  it('reads a bundle compressed at level 15 with a checksum, fed in small chunks', async () => {
    const fail = junitFixture('01-trunk-analytics-cli-googletest-fail.xml');
    const big = report(3 * MiB);
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson() },
      { name: 'junit/0', data: fail },
      { name: 'junit/1', data: big },
    ]);
    const bundle = await zstd(tar);
    expect(bundle.length).toBeLessThan(tar.length / 10);
    const result = await extractBundle(chunks(bundle, 1000));
    if (!result.ok) throw new Error(result.error);
    expect(result.format).toBe('tar+zstd');
    expect(result.files.map((f) => [f.name, f.bytes.length])).toEqual([
      ['junit/0', fail.length],
      ['junit/1', big.length],
    ]);
    expect(Buffer.from(result.files[1]?.bytes ?? []).equals(Buffer.from(big))).toBe(true);
  });

  it('stops at the total cap, and refuses a truncated or damaged stream', async () => {
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson() },
      { name: 'junit/0', data: report(3 * MiB) },
    ]);
    const bundle = await zstd(tar);
    const capped = refused(await extractBundle(chunks(bundle, 4096), { maxTotalBytes: 2 * MiB }));
    expect(capped.error).toBe('the bundle decompresses to more than 2 MiB');
    // Knowing the size up front, a one-shot encoder declares it: refused from the frame header.
    const declared = refused(
      await extractBundle(chunks(zstdCompressSync(tar), 4096), { maxTotalBytes: 2 * MiB }),
    );
    expect(declared.error).toMatch(/^zstd frame declares \d+ decompressed bytes; the limit is 2 MiB$/);

    const truncated = refused(await extractBundle(chunks(bundle.subarray(0, bundle.length - 100), 4096)));
    expect(truncated).toEqual({
      ok: false,
      code: 'corrupt',
      error: 'truncated zstd data: the stream ends inside a frame',
    });

    const damaged = Uint8Array.from(bundle);
    for (let i = 200; i < 260; i++) damaged[i] = (damaged[i] ?? 0) ^ 0x5a;
    const corrupt = refused(await extractBundle(chunks(damaged, 4096)));
    expect(corrupt.code).toBe('corrupt');
    expect(corrupt.error).toMatch(/^corrupt zstd data: /);
  });

  it('refuses a frame whose window is over the limit (16 MiB > 8 MiB) before decoding it', async () => {
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson() },
      { name: 'junit/0', data: report(17 * MiB) },
    ]);
    const bundle = await zstd(tar, {
      [constants.ZSTD_c_compressionLevel]: 3,
      [constants.ZSTD_c_windowLog]: 24,
    });
    const result = refused(await extractBundle(chunks(bundle, 65536)));
    expect(result).toEqual({
      ok: false,
      code: 'too_large',
      error: 'zstd window of 16 MiB exceeds the limit of 8 MiB (compress without --long/--ultra)',
    });
    const allowed = await extractBundle(chunks(bundle, 65536), { maxWindowBytes: 16 * MiB });
    expect(allowed.ok).toBe(true);
  });
});
