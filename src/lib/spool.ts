// A byte buffer of bounded memory: the first `memoryBytes` are kept in memory, the rest go to a
// temporary file, and any range can be read back as a stream. Used to receive request bodies whole
// before working on them, without N concurrent bodies of hundreds of MiB taking all the memory.
// Generic: it knows nothing of HTTP or uploads.
import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Bytes written to the file at once: tail chunks are gathered up to this size first. */
const WRITE_BYTES = 256 * 1024;
/** Bytes read from the file per chunk yielded. */
const READ_BYTES = 256 * 1024;
/** Default in-memory part of a spool. */
export const SPOOL_MEMORY_BYTES = 1024 * 1024;

/**
 * Spool files are named `spool-<host>-<pid>-<start>-<random>`: `<start>` is when this process started,
 * so a file of an earlier process that had the same pid (a container's pid 1 after a restart) is
 * told apart from one of ours; `<host>` keeps servers sharing a data directory from sweeping each
 * other's files.
 */
const HOST =
  os
    .hostname()
    .replace(/[^A-Za-z0-9]/g, '_')
    .slice(0, 40) || 'host';
const PROCESS_START = Math.round(performance.timeOrigin).toString(36);
const PREFIX = `spool-${HOST}-`;
const NAME = /^spool-(.+)-(\d+)-([0-9a-z]+)-[0-9a-f]+$/;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Where spools put their files: one directory, shared by every spool of a process. */
export class SpoolDir {
  #open = 0;

  constructor(
    readonly dir: string,
    readonly memoryBytes: number = SPOOL_MEMORY_BYTES,
  ) {}

  /** Spools whose file exists now (a test and metrics hook). */
  get filesOpen(): number {
    return this.#open;
  }

  /** A new, empty spool; close it when done, whatever happens. */
  create(): Spool {
    return new Spool(this, this.memoryBytes, {
      opened: () => {
        this.#open++;
      },
      closed: () => {
        this.#open--;
      },
    });
  }

  /**
   * Creates the directory, and removes the files left in it by processes of this host that are gone
   * (a crash or a kill leaves them: nothing else would ever remove them). Returns how many it removed.
   */
  async sweep(): Promise<number> {
    await mkdir(this.dir, { recursive: true });
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      const match = NAME.exec(name);
      if (match === null || !name.startsWith(PREFIX)) continue;
      const pid = Number(match[2]);
      const stale = pid === process.pid ? match[3] !== PROCESS_START : !isRunning(pid);
      if (!stale) continue;
      await rm(path.join(this.dir, name), { force: true });
      removed++;
    }
    return removed;
  }

  /** A fresh file path for a spool. */
  fileName(): string {
    return path.join(this.dir, `${PREFIX}${process.pid}-${PROCESS_START}-${randomBytes(8).toString('hex')}`);
  }
}

/** Called as a spool's file is created and removed. */
interface FileEvents {
  opened(): void;
  closed(): void;
}

export class Spool {
  readonly #memory: Buffer[] = [];
  #memoryUsed = 0;
  /** Tail bytes not yet written to the file. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #file: FileHandle | undefined;
  #path: string | undefined;
  #fileBytes = 0;
  #size = 0;
  #closed = false;

  constructor(
    private readonly dir: SpoolDir,
    private readonly memoryBytes: number,
    private readonly events: FileEvents,
  ) {}

  /** Bytes written so far. */
  get size(): number {
    return this.#size;
  }

  /** The temporary file, once the spool has outgrown its memory part. */
  get path(): string | undefined {
    return this.#path;
  }

  /** Appends `chunk` (copied where kept in memory, so the caller may reuse it). */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#closed) throw new Error('the spool is closed');
    let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#size += bytes.length;
    const room = this.memoryBytes - this.#memoryUsed;
    if (room > 0) {
      const kept = bytes.subarray(0, room);
      this.#memory.push(Buffer.from(kept));
      this.#memoryUsed += kept.length;
      bytes = bytes.subarray(kept.length);
    }
    if (bytes.length === 0) return;
    this.#pending.push(Buffer.from(bytes));
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes >= WRITE_BYTES) await this.#flush();
  }

  /** Writes what is gathered to the file; call it before reading. */
  async finish(): Promise<void> {
    await this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#pendingBytes === 0) return;
    const data = Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    if (this.#file === undefined) {
      const file = this.dir.fileName();
      await mkdir(path.dirname(file), { recursive: true });
      this.#file = await open(file, 'wx+', 0o600);
      this.#path = file;
      this.events.opened();
      // Closed meanwhile (the request ended while the file was being opened): nothing may remain.
      if (this.#closed) {
        await this.#removeFile();
        throw new Error('the spool is closed');
      }
    }
    let at = 0;
    while (at < data.length) {
      const { bytesWritten } = await this.#file.write(data, at, data.length - at, this.#fileBytes + at);
      at += bytesWritten;
    }
    this.#fileBytes += data.length;
  }

  /** The bytes from `start` to `end` (exclusive), in chunks of at most 256 KiB; finish() first. */
  async *read(start = 0, end = this.#size): AsyncGenerator<Uint8Array> {
    if (this.#pendingBytes > 0) throw new Error('Spool.read: call finish() after the last write');
    let at = Math.max(0, start);
    const stop = Math.min(end, this.#size);
    let offset = 0;
    for (const part of this.#memory) {
      if (at >= stop) return;
      const partEnd = offset + part.length;
      if (at < partEnd) {
        yield part.subarray(at - offset, Math.min(partEnd, stop) - offset);
        at = Math.min(partEnd, stop);
      }
      offset = partEnd;
    }
    while (at < stop) {
      const file = this.#file;
      if (file === undefined || this.#closed) throw new Error('the spool is closed');
      // A buffer of its own per chunk: the consumer may keep it or move it to another thread.
      const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, stop - at));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, at - this.memoryBytes);
      if (bytesRead === 0) throw new Error('the spool file is shorter than what was written to it');
      yield buffer.subarray(0, bytesRead);
      at += bytesRead;
    }
  }

  /** Drops the bytes and removes the file; safe to call again. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#memory.length = 0;
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.#removeFile();
  }

  async #removeFile(): Promise<void> {
    const file = this.#file;
    const at = this.#path;
    this.#file = undefined;
    this.#path = undefined;
    if (file === undefined || at === undefined) return;
    try {
      // Waits for reads still pending on the handle (FileHandle.close does), so none reads another file.
      await file.close();
    } finally {
      await rm(at, { force: true });
      this.events.closed();
    }
  }
}

/**
 * Reads `source` whole into a new spool of `dir`, throwing `tooLarge()` as soon as it passes `limit`
 * bytes. The spool is closed (its file removed) when this fails.
 */
export async function spoolAll(
  dir: SpoolDir,
  source: AsyncIterable<Uint8Array>,
  limit: number,
  tooLarge: () => Error,
): Promise<Spool> {
  const spool = dir.create();
  try {
    for await (const chunk of source) {
      if (spool.size + chunk.length > limit) throw tooLarge();
      await spool.write(chunk);
    }
    await spool.finish();
    return spool;
  } catch (error) {
    await spool.close();
    throw error;
  }
}
