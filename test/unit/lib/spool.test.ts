// The spool (src/lib/spool.ts): memory bounded by its in-memory part, the rest in a file that is
// read back byte for byte and removed on close, on failure, and (if a process died) at the next start.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SpoolDir, spoolAll } from '../../../src/lib/spool.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-spool-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const files = (): string[] => fs.readdirSync(path.join(dir, 'tmp'));

async function collect(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of source) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

/** `bytes` in chunks of uneven sizes, as a socket delivers them. */
async function* chunked(bytes: Buffer): AsyncGenerator<Uint8Array> {
  let at = 0;
  let size = 1;
  while (at < bytes.length) {
    yield bytes.subarray(at, at + size);
    at += size;
    size = (size * 7 + 13) % 70_000;
  }
}

describe('Spool', () => {
  it('keeps only its memory part in memory and round-trips a larger body byte for byte', async () => {
    const spools = new SpoolDir(path.join(dir, 'tmp'), 64 * 1024);
    const body = randomBytes(3 * 1024 * 1024 + 17);
    const spool = await spoolAll(spools, chunked(body), 10 * 1024 * 1024, () => new Error('too large'));
    expect(spool.size).toBe(body.length);
    // Everything past the memory part is in the file.
    expect(spool.path).toBeDefined();
    expect(fs.statSync(spool.path as string).size).toBe(body.length - 64 * 1024);
    expect(spools.filesOpen).toBe(1);
    expect((await collect(spool.read())).equals(body)).toBe(true);
    // Ranges across the memory part and the file, inside each, and empty ones.
    for (const [start, end] of [
      [0, 10],
      [60_000, 70_000],
      [64 * 1024, 64 * 1024 + 1],
      [1_000_000, 2_500_000],
      [body.length - 5, body.length],
      [500, 500],
    ] as const) {
      expect((await collect(spool.read(start, end))).equals(body.subarray(start, end))).toBe(true);
    }
    // No chunk read back is larger than 256 KiB.
    for await (const chunk of spool.read()) expect(chunk.length).toBeLessThanOrEqual(256 * 1024);
    await spool.close();
    expect(files()).toEqual([]);
    expect(spools.filesOpen).toBe(0);
    await spool.close();
  });

  it('makes no file for a body within its memory part', async () => {
    const spools = new SpoolDir(path.join(dir, 'tmp'), 64 * 1024);
    const body = randomBytes(64 * 1024);
    const spool = await spoolAll(spools, chunked(body), 1e9, () => new Error('too large'));
    expect(spool.path).toBeUndefined();
    expect((await collect(spool.read())).equals(body)).toBe(true);
    await spool.close();
  });

  it('removes its file when the source fails or passes the limit', async () => {
    const spools = new SpoolDir(path.join(dir, 'tmp'), 1024);
    let seen: string | undefined;
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield randomBytes(300_000);
      seen = files()[0];
      throw new Error('the client went away');
    }
    await expect(spoolAll(spools, broken(), 1e9, () => new Error('too large'))).rejects.toThrow(
      'the client went away',
    );
    expect(seen).toMatch(/^spool-/);
    expect(files()).toEqual([]);

    await expect(
      spoolAll(spools, chunked(randomBytes(2_000_000)), 1_000_000, () => new Error('too large')),
    ).rejects.toThrow('too large');
    expect(files()).toEqual([]);
    expect(spools.filesOpen).toBe(0);
  });

  it('removes, at start, the files of processes that are gone, and keeps those of running ones', async () => {
    const spools = new SpoolDir(path.join(dir, 'tmp'), 1024);
    const live = await spoolAll(spools, chunked(randomBytes(10_000)), 1e9, () => new Error('x'));
    const mine = path.basename(live.path as string);
    const [, host, , start] = /^spool-(.+)-(\d+)-([0-9a-z]+)-[0-9a-f]+$/.exec(mine) ?? [];
    // A process that no longer runs, and this pid in an earlier life (a restarted container's pid 1).
    const dead = `spool-${host}-2147483646-${start}-00aa`;
    const earlier = `spool-${host}-${process.pid}-zz0-00bb`;
    const otherHost = 'spool-elsewhere-2147483646-zz0-00cc';
    for (const name of [dead, earlier, otherHost]) fs.writeFileSync(path.join(dir, 'tmp', name), 'x');
    expect(await spools.sweep()).toBe(2);
    expect(files().sort()).toEqual([mine, otherHost].sort());
    await live.close();
    // The directory is created when missing.
    fs.rmSync(path.join(dir, 'tmp'), { recursive: true });
    await new SpoolDir(path.join(dir, 'tmp')).sweep();
    expect(files()).toEqual([]);
  });
});
