/** Builders for bundle tests: hand-written zstd frames (RFC 8878), tar headers and tar archives. */
import { readFileSync } from 'node:fs';
import { pack } from 'tar-stream';
import type { BundleResult } from '../../src/app/bundle/index.ts';

export const FIXTURES = new URL('../fixtures/bundles/', import.meta.url);
export const JUNIT_FIXTURES = new URL('../fixtures/junit/', import.meta.url);

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(name, FIXTURES)));
}

export function junitFixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(name, JUNIT_FIXTURES)));
}

export function fixtureMeta(): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL('meta.json', FIXTURES), 'utf8')) as Record<string, unknown>;
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

export async function* chunks(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
}

const MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

/** A frame header without content size: window descriptor `windowLog`, optional checksum flag. */
export function frameHeader(
  options: { windowLog?: number; checksum?: boolean; dictId?: number } = {},
): Uint8Array {
  const dictFlag = options.dictId === undefined ? 0 : 1;
  const descriptor = ((options.checksum ? 1 : 0) << 2) | dictFlag;
  const header = [...MAGIC, descriptor, ((options.windowLog ?? 17) - 10) << 3];
  if (options.dictId !== undefined) header.push(options.dictId);
  return Uint8Array.from(header);
}

/** A single-segment frame header declaring a 4-byte content size. */
export function singleSegmentHeader(contentSize: number): Uint8Array {
  const size = [contentSize & 255, (contentSize >>> 8) & 255, (contentSize >>> 16) & 255, contentSize >>> 24];
  return Uint8Array.from([...MAGIC, (2 << 6) | (1 << 5), ...size]);
}

function blockHeader(type: number, size: number, last: boolean): Uint8Array {
  const v = (last ? 1 : 0) | (type << 1) | (size << 3);
  return Uint8Array.from([v & 255, (v >>> 8) & 255, (v >>> 16) & 255]);
}

export function rawBlock(data: Uint8Array, last = false): Uint8Array {
  return concat([blockHeader(0, data.length, last), data]);
}

export function rleBlock(byte: number, size: number, last = false): Uint8Array {
  return concat([blockHeader(1, size, last), Uint8Array.of(byte)]);
}

/** `data` as one zstd frame of raw (stored) blocks of at most `blockSize` bytes. */
export function zstdStored(data: Uint8Array, blockSize = 128 * 1024): Uint8Array {
  const parts = [frameHeader({ windowLog: 17 })];
  if (data.length === 0) parts.push(rawBlock(new Uint8Array(0), true));
  for (let i = 0; i < data.length; i += blockSize) {
    parts.push(rawBlock(data.subarray(i, i + blockSize), i + blockSize >= data.length));
  }
  return concat(parts);
}

/** A zstd frame whose tar holds `count` entries of `size` zero bytes each, as RLE blocks: tiny in, huge out (a bomb). */
export function zeroEntriesBomb(count: number, size: number, name: (i: number) => string): Uint8Array {
  const block = 128 * 1024;
  const parts = [frameHeader({ windowLog: 17 })];
  for (let i = 0; i < count; i++) {
    parts.push(rawBlock(tarHeader(name(i), size)));
    for (let left = size; left > 0; left -= block) parts.push(rleBlock(0, Math.min(block, left)));
  }
  parts.push(rawBlock(END_OF_ARCHIVE, true));
  return concat(parts);
}

/** The refusal of a bundle that must be refused (throws when it was read). */
export function refused(result: BundleResult): Extract<BundleResult, { ok: false }> {
  if (result.ok) throw new Error('expected the bundle to be refused');
  return result;
}

/** A ustar header block, written by hand so that tests can declare sizes without writing data. */
export function tarHeader(name: string, size: number, typeflag = '0', linkname = ''): Uint8Array {
  const block = new Uint8Array(512);
  const put = (text: string, at: number) => block.set(Buffer.from(text, 'utf8'), at);
  put(name, 0);
  put('0000644\0', 100);
  put('0000000\0', 108);
  put('0000000\0', 116);
  put(`${size.toString(8).padStart(11, '0')}\0`, 124);
  put('14660000000\0', 136);
  put('        ', 148);
  put(typeflag, 156);
  put(linkname, 157);
  put('ustar\0' + '00', 257);
  const sum = block.reduce((a, b) => a + b, 0);
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

export function tarPadding(size: number): Uint8Array {
  return new Uint8Array((512 - (size % 512)) % 512);
}

export const END_OF_ARCHIVE = new Uint8Array(1024);

export interface TarInput {
  readonly name: string;
  readonly data?: Uint8Array | string;
  readonly type?: 'file' | 'directory' | 'symlink' | 'link' | 'character-device' | 'fifo';
  readonly linkname?: string;
}

/** A tar archive written by tar-stream's pack() (ustar, pax for long names). */
export async function buildTar(entries: readonly TarInput[]): Promise<Uint8Array> {
  const archive = pack();
  const parts: Buffer[] = [];
  const done = (async () => {
    for await (const part of archive) parts.push(part);
  })();
  for (const entry of entries) {
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data) : Buffer.from(entry.data ?? []);
    const header = { name: entry.name, type: entry.type ?? 'file', linkname: entry.linkname ?? null };
    await new Promise<void>((resolve, reject) =>
      archive.entry(header, header.type === 'file' ? data : undefined, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }
  archive.finalize();
  await done;
  return concat(parts);
}

export function metaJson(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...fixtureMeta(), ...overrides });
}

/** The bundle the analytics CLI would send, as tar-stream writes it, zstd-stored. */
export async function cliBundle(overrides: Record<string, unknown> = {}): Promise<Uint8Array> {
  const tar = await buildTar([
    { name: 'meta.json', data: metaJson(overrides) },
    { name: 'junit/0', data: junitFixture('01-trunk-analytics-cli-googletest-fail.xml') },
    { name: 'junit/1', data: junitFixture('02-trunk-analytics-cli-googletest-pass-retry.xml') },
    { name: 'internal.bin', data: Uint8Array.of(10, 4, 116, 101, 115, 116) },
    { name: 'CODEOWNERS', data: '* @acme/everyone\n' },
  ]);
  return zstdStored(tar, 1000);
}

// ---- analytics-cli bundles carrying internal.bin (trunk-io/analytics-cli at fcbc1bd2a5f8d730f453f60e4b0b117fd12f93f8:
// bundle/src/bundler.rs writes meta.json, then meta's internal_bundled_file, then the file sets' files
// except Internal ones, then CODEOWNERS; bundle/src/files.rs names JUnit entries junit/<n> and .bin
// entries internal/<n>; cli/src/context.rs generate_internal_file writes internal.bin, or takes an
// Internal file set's one file as it is, which is what the rspec plugin's upload does.)

export type { RunInput } from '../../src/domain/internal-bin/index.ts';
/** internal.bin: a TestReport of these results' runs, encoded with Mainline's own schema. */
export {
  encodeReport as internalBin,
  encodeResult as internalBinAsTestResult,
} from '../../src/domain/internal-bin/index.ts';

export interface BundleRepo {
  readonly host: string;
  readonly owner: string;
  readonly name: string;
}

function cliMeta(
  repo: BundleRepo,
  sha: string,
  fileSets: unknown[],
  internalBundledFile: unknown,
  extra: Record<string, unknown>,
): string {
  return metaJson({
    org: 'acme',
    variant: '',
    repo: {
      repo,
      repo_root: '/home/runner/work/web/web',
      repo_url: `https://${repo.host}/${repo.owner}/${repo.name}.git`,
      repo_head_sha: sha,
      repo_head_branch: 'refs/heads/main',
      repo_head_commit_epoch: 1782900000,
    },
    envs: { CI: 'true', GITHUB_ACTIONS: 'true', GITHUB_REF: 'refs/heads/main', GITHUB_REF_NAME: 'main' },
    codeowners: null,
    file_sets: fileSets,
    internal_bundled_file: internalBundledFile,
    ...extra,
  });
}

/**
 * A bundle as `trunk-analytics-cli upload --junit-paths …` makes it: meta.json listing the JUnit
 * files (a Junit file set), internal.bin (meta's internal_bundled_file) when given, then junit/<n>.
 */
export async function analyticsCliBundle(input: {
  repo: BundleRepo;
  sha: string;
  junit?: readonly string[];
  internalBin?: Uint8Array;
  meta?: Record<string, unknown>;
}): Promise<Uint8Array> {
  const junit = input.junit ?? [];
  const fileSets =
    junit.length === 0
      ? []
      : [
          {
            file_set_type: 'Junit',
            glob: 'out/*.xml',
            resolved_status: null,
            files: junit.map((_, i) => ({
              original_path: `/home/runner/work/web/web/out/report${i}.xml`,
              original_path_rel: `out/report${i}.xml`,
              path: `junit/${i}`,
              owners: [],
              team: null,
            })),
          },
        ];
  const bundled =
    input.internalBin === undefined
      ? null
      : {
          original_path: '/tmp/.tmpQ7rT2k/internal.bin',
          original_path_rel: null,
          path: 'internal.bin',
          owners: [],
          team: null,
        };
  const tar = await buildTar([
    { name: 'meta.json', data: cliMeta(input.repo, input.sha, fileSets, bundled, input.meta ?? {}) },
    ...(input.internalBin === undefined ? [] : [{ name: 'internal.bin', data: input.internalBin }]),
    ...junit.map((data, i) => ({ name: `junit/${i}`, data })),
  ]);
  return zstdStored(tar, 64 * 1024);
}

/**
 * A bundle as the rspec plugin's upload makes it (rspec-trunk-flaky-tests → test_report publish():
 * its TestReport saved as a temporary .bin and passed as the only "junit path"): meta.json with an
 * Internal file set of that one file, which is also meta's internal_bundled_file, and internal/0.
 */
export async function rspecPluginBundle(input: {
  repo: BundleRepo;
  sha: string;
  bin: Uint8Array;
  meta?: Record<string, unknown>;
}): Promise<Uint8Array> {
  const file = {
    original_path: '/tmp/.tmpW1x2Y3.bin',
    original_path_rel: '/tmp/.tmpW1x2Y3.bin',
    path: 'internal/0',
    owners: [],
    team: null,
  };
  const fileSets = [
    { file_set_type: 'Internal', files: [file], glob: file.original_path, resolved_status: null },
  ];
  const tar = await buildTar([
    { name: 'meta.json', data: cliMeta(input.repo, input.sha, fileSets, file, input.meta ?? {}) },
    { name: 'internal/0', data: input.bin },
  ]);
  return zstdStored(tar, 64 * 1024);
}
