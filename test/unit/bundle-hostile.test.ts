import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { extractBundle } from '../../src/app/bundle/index.ts';
import {
  buildTar,
  chunks,
  cliBundle,
  concat,
  END_OF_ARCHIVE,
  fixture,
  frameHeader,
  junitFixture,
  metaJson,
  refused,
  rleBlock,
  singleSegmentHeader,
  tarHeader,
  tarPadding,
  zeroEntriesBomb,
  zstdStored,
} from '../support/bundles.ts';

const MiB = 1024 * 1024;

describe('extractBundle: decompression bombs', () => {
  it('stops a zstd bomb at the 512 MiB total cap without decompressing the rest', async () => {
    // 100 entries × 64 MiB = 6.25 GiB of output from ~200 KiB of input.
    const bomb = zeroEntriesBomb(100, 64 * MiB, (i) => `pad/${i}`);
    expect(bomb.length).toBeLessThan(300 * 1024);
    const started = performance.now();
    const result = refused(await extractBundle(chunks(bomb, 64 * 1024)));
    expect(result).toEqual({
      ok: false,
      code: 'too_large',
      error: 'the bundle decompresses to more than 512 MiB',
    });
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('refuses an entry over the per-file cap from its header, before reading its data', async () => {
    const bomb = zeroEntriesBomb(1, 101 * MiB, () => 'junit/0');
    const result = refused(await extractBundle(chunks(bomb, 4096)));
    expect(result.code).toBe('too_large');
    expect(result.error).toBe('entry "junit/0" is 105906176 bytes; the per-file limit is 100 MiB');
  });

  it('honours smaller limits, including for gzip', async () => {
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson() },
      { name: 'junit/0', data: new Uint8Array(3 * MiB) },
    ]);
    const limits = { maxTotalBytes: 2 * MiB };
    const gz = refused(await extractBundle(chunks(gzipSync(tar), 1024), limits));
    expect(gz.error).toBe('the bundle decompresses to more than 2 MiB');
    const perFile = refused(await extractBundle(chunks(zstdStored(tar), 65536), { maxFileBytes: MiB }));
    expect(perFile.error).toMatch(/^entry "junit\/0" is 3145728 bytes; the per-file limit is 1 MiB$/);
  });

  it('refuses frames that declare a huge window or content size, or need a dictionary', async () => {
    const huge = refused(
      await extractBundle(chunks(concat([frameHeader({ windowLog: 27 }), rleBlock(0, 10)]), 3)),
    );
    expect(huge).toMatchObject({ code: 'too_large' });
    expect(huge.error).toMatch(/zstd window of 128 MiB exceeds the limit of 8 MiB/);
    const declared = refused(await extractBundle(chunks(singleSegmentHeader(0xfffffff0), 1)));
    expect(declared.error).toBe('zstd frame declares 4294967280 decompressed bytes; the limit is 512 MiB');
    const dict = refused(
      await extractBundle(chunks(concat([frameHeader({ dictId: 7 }), rleBlock(0, 10, true)]), 1)),
    );
    expect(dict).toMatchObject({
      code: 'unsupported_format',
      error: 'zstd frames compressed with a dictionary are not supported',
    });
  });

  it('refuses more than 10,000 entries', async () => {
    const parts = Array.from({ length: 10_001 }, (_, i) => tarHeader(`d${i}/`, 0, '5'));
    const result = refused(
      await extractBundle(chunks(zstdStored(concat([...parts, END_OF_ARCHIVE])), 65536)),
    );
    expect(result).toEqual({ ok: false, code: 'too_large', error: 'the bundle has more than 10000 entries' });
  });
});

describe('extractBundle: unsafe entries are skipped with a problem', () => {
  it('skips absolute paths, .. segments, links, devices and FIFOs but reads the rest', async () => {
    const xml = junitFixture('01-trunk-analytics-cli-googletest-fail.xml');
    const tar = await buildTar([
      { name: 'meta.json', data: metaJson() },
      { name: 'junit/0', data: xml },
      { name: '/etc/passwd.xml', data: '<x/>' },
      { name: 'junit/../../escape.xml', data: '<x/>' },
      { name: 'junit\\..\\..\\win.xml', data: '<x/>' },
      { name: 'junit/1', type: 'symlink', linkname: '/etc/shadow' },
      { name: 'hard.xml', type: 'link', linkname: 'junit/0' },
      { name: 'tty.xml', type: 'character-device' },
      { name: 'pipe.xml', type: 'fifo' },
    ]);
    const result = await extractBundle(chunks(zstdStored(tar), 777));
    expect(result.ok && result.files.map((f) => [f.name, f.bytes])).toEqual([['junit/0', xml]]);
    expect(result.ok && result.problems).toEqual([
      'skipped entry "/etc/passwd.xml": the path is absolute',
      'skipped entry "junit/../../escape.xml": the path contains ".."',
      'skipped entry "junit\\\\..\\\\..\\\\win.xml": the path contains ".."',
      'skipped symlink entry "junit/1": only regular files are read',
      'skipped hardlink entry "hard.xml": only regular files are read',
      'skipped character-device entry "tty.xml": only regular files are read',
      'skipped fifo entry "pipe.xml": only regular files are read',
      'meta.json lists "junit/1" but the bundle has no such file',
    ]);
  });

  it('ignores unsafe paths listed in meta.json', async () => {
    const fileSets = [
      { file_set_type: 'Junit', files: [{ path: '../x.xml', original_path: '/x' }], glob: '*' },
    ];
    const tar = await buildTar([{ name: 'meta.json', data: metaJson({ file_sets: fileSets }) }]);
    const result = await extractBundle(chunks(zstdStored(tar), 4096));
    expect(result.ok && result.problems).toEqual([
      'meta.json lists JUnit file "../x.xml", ignored: the path contains ".."',
      'the bundle contains no JUnit files',
    ]);
  });
});

describe('extractBundle: meta.json', () => {
  async function withMeta(data: string | undefined, extra: { name: string; data: string }[] = []) {
    const entries = data === undefined ? [] : [{ name: 'meta.json', data }];
    return extractBundle(chunks(zstdStored(await buildTar([...entries, ...extra])), 4096));
  }

  it('refuses a bundle without meta.json, with invalid JSON, or with two of them', async () => {
    expect(await withMeta(undefined, [{ name: 'junit/0', data: '<x/>' }])).toEqual({
      ok: false,
      code: 'invalid_meta',
      error: 'the bundle has no meta.json',
    });
    expect(refused(await withMeta('{"org": ')).error).toMatch(/^meta\.json is not valid JSON: /);
    expect(refused(await withMeta('[1, 2]')).error).toBe('meta.json is not a JSON object');
    expect(refused(await withMeta(metaJson(), [{ name: 'meta.json', data: metaJson() }])).error).toBe(
      'the bundle has more than one meta.json',
    );
  });

  it('refuses meta.json that names no repository or commit', async () => {
    const noRepo = refused(await withMeta(metaJson({ repo: { repo_head_sha: 'abc' }, envs: {} })));
    expect(noRepo).toMatchObject({ code: 'invalid_meta' });
    expect(noRepo.error).toMatch(/does not name the repository/);
    const noSha = refused(
      await withMeta(metaJson({ repo: { repo_url: 'https://github.com/a/b' }, envs: {} })),
    );
    expect(noSha.error).toBe('meta.json has no commit SHA (repo.repo_head_sha)');
  });

  it('refuses a meta.json over its limit', async () => {
    const result = refused(await extractBundle(chunks(await cliBundle(), 4096), { maxMetaBytes: 100 }));
    expect(result.code).toBe('too_large');
    expect(result.error).toMatch(/^meta\.json is \d+ bytes; the limit is 100 bytes$/);
  });
});

describe('extractBundle: truncated, corrupt and foreign input', () => {
  it('refuses every truncation of a real bundle', async () => {
    const bytes = fixture('cli-like.tar.zstd');
    for (let length = 0; length < bytes.length; length += length < 100 ? 1 : 4) {
      const result = refused(await extractBundle(chunks(bytes.subarray(0, length), 512)));
      expect(result.code).toBe(length < 4 ? 'unsupported_format' : 'corrupt');
    }
  });

  it('never throws on a damaged real bundle', async () => {
    const bytes = fixture('cli-like.tar.zstd');
    // Every third byte: each run allocates the frame's 4 MiB window, which dominates the time.
    for (let at = 0; at < bytes.length; at += 3) {
      const damaged = bytes.slice();
      damaged[at] = (damaged[at] ?? 0) ^ 0x5a;
      const result = await extractBundle(chunks(damaged, 256));
      if (!result.ok)
        expect(['corrupt', 'too_large', 'unsupported_format', 'invalid_meta']).toContain(result.code);
    }
  });

  it('refuses a tar that stops inside an entry or has no end marker, and a bad header checksum', async () => {
    const header = tarHeader('meta.json', 1000);
    const inside = refused(await extractBundle(chunks(zstdStored(concat([header, new Uint8Array(10)])), 64)));
    expect(inside.error).toBe('truncated tar archive: the data ends inside entry "meta.json"');
    const tar = await buildTar([{ name: 'meta.json', data: metaJson() }]);
    const noEnd = refused(await extractBundle(chunks(zstdStored(tar.subarray(0, tar.length - 1024)), 64)));
    expect(noEnd.error).toBe('truncated tar archive: no end-of-archive marker');
    const bad = tarHeader('meta.json', 2);
    bad[0] = 0x4e;
    const checksum = refused(
      await extractBundle(chunks(zstdStored(concat([bad, tarPadding(0), END_OF_ARCHIVE])), 64)),
    );
    expect(checksum).toEqual({
      ok: false,
      code: 'corrupt',
      error: 'corrupt tar archive: header checksum mismatch',
    });
  });

  it('refuses garbage after a zstd frame and a truncated gzip stream', async () => {
    const trailing = refused(
      await extractBundle(chunks(concat([await cliBundle(), Uint8Array.of(1, 2, 3, 4)]), 999)),
    );
    expect(trailing.error).toBe('corrupt zstd data: no frame magic number after frame 1');
    const tar = await buildTar([{ name: 'meta.json', data: metaJson() }]);
    const gz = gzipSync(tar);
    const cut = refused(await extractBundle(chunks(gz.subarray(0, gz.length - 20), 999)));
    expect(cut.code).toBe('corrupt');
    expect(cut.error).toMatch(/^corrupt gzip data: /);
  });

  it('says what it expected when the upload is not a bundle', async () => {
    const empty = refused(await extractBundle(chunks(new Uint8Array(0), 1)));
    expect(empty).toEqual({
      ok: false,
      code: 'unsupported_format',
      error: 'the upload is empty: expected a bundle.tar.zstd',
    });
    const xml = refused(await extractBundle(chunks(junitFixture('09-pytest-single-line.xml'), 100)));
    expect(xml.code).toBe('unsupported_format');
    expect(xml.error).toMatch(
      /^expected a zstd-compressed tar \(bundle\.tar\.zstd, starting with bytes 28 b5 2f fd; gzip or plain tar also accepted\), but the upload starts with 3c 3f 78 6d \(XML text/,
    );
    const zip = refused(await extractBundle(chunks(Uint8Array.of(0x50, 0x4b, 3, 4, 0, 0), 100)));
    expect(zip.error).toMatch(/starts with 50 4b 03 04 \(a zip archive\)$/);
  });

  it('leaves a refused Readable undestroyed for the caller', async () => {
    const stream = new PassThrough();
    stream.write(Buffer.alloc(600, 'x'));
    refused(await extractBundle(stream));
    expect(stream.destroyed).toBe(false);
    stream.end('the caller can still drain it');
    stream.resume();
  });

  it('throws on a source that yields strings (a programming error)', async () => {
    await expect(extractBundle(Readable.from(['text'], { objectMode: true }))).rejects.toThrow(TypeError);
  });
});
