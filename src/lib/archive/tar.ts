/**
 * A synchronous push parser for tar (POSIX ustar, pax `x`/`g` headers, GNU `L` long names, v7).
 * It never buffers entry data itself: the visitor decides per entry whether to receive it. Each
 * decoded piece is handled before the next is taken, so a refusal (a size or entry limit) stops
 * decoding at once, with no asynchronous entry streams to drain as tar-stream's extract() has.
 */
import { decodeTarHeader, isZeroBlock, type RawTarHeader } from './tar-header.ts';
import { type ArchiveErrorCode, type Failure, fail, formatBytes, OK, type Verdict } from './verdict.ts';

export type TarEntryType = RawTarHeader['type'];

export interface TarEntry {
  /** The raw name (pax `path` or GNU long name applied), not yet checked or normalised. */
  readonly name: string;
  readonly type: TarEntryType;
  readonly size: number;
}

/** What the visitor wants done with an entry (`C`: the error codes of the visitor's own refusals). */
export type EntryDecision<C extends string = ArchiveErrorCode> =
  /** Pass its bytes to `data`, then call `entryEnd`. */
  | { readonly ok: true; readonly keep: true }
  /** Skip its bytes. */
  | { readonly ok: true; readonly keep: false }
  /** Refuse the archive. */
  | Failure<C>;

export interface TarVisitor<C extends string = ArchiveErrorCode> {
  entry(entry: TarEntry): EntryDecision<C>;
  /** Part of a kept entry's data; the bytes may be reused after the call. */
  data(bytes: Uint8Array): Verdict<C>;
  entryEnd(): Verdict<C>;
}

/** Largest pax or GNU long-name header we read into memory. */
const MAX_EXTENSION_BYTES = 1024 * 1024;

type Target =
  /** Data goes to the visitor. */
  | 'visitor'
  /** Data is a pax extended header for the next entry. */
  | 'pax'
  /** Data is a GNU long name for the next entry. */
  | 'gnu-name'
  /** Data is dropped. */
  | 'discard';

/** Reads a tar archive pushed in pieces; its verdicts carry the visitor's refusals and its own. */
export class TarReader<C extends string = ArchiveErrorCode> {
  private readonly block = new Uint8Array(512);
  private filled = 0;
  private phase: 'header' | 'body' | 'padding' | 'ended' = 'header';
  private remaining = 0;
  private padding = 0;
  private target: Target = 'discard';
  private extension: Uint8Array | undefined;
  private extensionFilled = 0;
  private pendingPath: string | undefined;
  private pendingSize: number | undefined;
  private currentName = '';

  constructor(private readonly visitor: TarVisitor<C>) {}

  push(bytes: Uint8Array): Verdict<C | ArchiveErrorCode> {
    let i = 0;
    while (i < bytes.length && this.phase !== 'ended') {
      const verdict = this.step(bytes, i);
      if (!verdict.ok) return verdict;
      i = verdict.next;
    }
    return OK;
  }

  /** No more bytes: the archive must have reached its end-of-archive block. */
  end(): Verdict<C | ArchiveErrorCode> {
    if (this.phase === 'ended') return OK;
    if (this.phase === 'header' && this.filled === 0) {
      return fail('corrupt', 'truncated tar archive: no end-of-archive marker');
    }
    return fail('corrupt', `truncated tar archive: the data ends inside entry "${this.currentName}"`);
  }

  private step(bytes: Uint8Array, i: number): Failure<C | ArchiveErrorCode> | { ok: true; next: number } {
    if (this.phase === 'header') {
      const n = Math.min(512 - this.filled, bytes.length - i);
      this.block.set(bytes.subarray(i, i + n), this.filled);
      this.filled += n;
      if (this.filled < 512) return { ok: true, next: i + n };
      this.filled = 0;
      const verdict = this.onHeader();
      return verdict.ok ? { ok: true, next: i + n } : verdict;
    }
    const n = Math.min(this.phase === 'body' ? this.remaining : this.padding, bytes.length - i);
    if (this.phase === 'padding') {
      this.padding -= n;
      if (this.padding === 0) this.phase = 'header';
      return { ok: true, next: i + n };
    }
    const verdict = this.onBody(bytes.subarray(i, i + n));
    return verdict.ok ? { ok: true, next: i + n } : verdict;
  }

  private onHeader(): Verdict<C | ArchiveErrorCode> {
    if (isZeroBlock(this.block)) {
      this.phase = 'ended';
      return OK;
    }
    const decoded = decodeTarHeader(this.block);
    if (!decoded.ok) return decoded;
    const header = decoded.header;
    if (header.type === 'pax' || header.type === 'gnu-long-name') {
      if (header.size > MAX_EXTENSION_BYTES) {
        return fail(
          'too_large',
          `tar extended header of ${header.size} bytes exceeds ${formatBytes(MAX_EXTENSION_BYTES)}`,
        );
      }
      this.extension = new Uint8Array(header.size);
      this.extensionFilled = 0;
      return this.startData(header.type === 'pax' ? 'pax' : 'gnu-name', header.size);
    }
    if (header.type === 'pax-global' || header.type === 'gnu-long-link')
      return this.startData('discard', header.size);
    return this.onEntryHeader(header);
  }

  private onEntryHeader(header: RawTarHeader): Verdict<C | ArchiveErrorCode> {
    const entry: TarEntry = {
      name: this.pendingPath ?? header.name,
      type: header.type,
      size: header.carriesData ? (this.pendingSize ?? header.size) : 0,
    };
    this.pendingPath = undefined;
    this.pendingSize = undefined;
    this.currentName = entry.name;
    const decision = this.visitor.entry(entry);
    if (!decision.ok) return decision;
    return this.startData(decision.keep ? 'visitor' : 'discard', entry.size);
  }

  private startData(target: Target, size: number): Verdict<C | ArchiveErrorCode> {
    this.target = target;
    this.remaining = size;
    this.padding = (512 - (size % 512)) % 512;
    this.phase = 'body';
    return size === 0 ? this.finishData() : OK;
  }

  private onBody(bytes: Uint8Array): Verdict<C | ArchiveErrorCode> {
    this.remaining -= bytes.length;
    if (this.target === 'visitor') {
      const verdict = this.visitor.data(bytes);
      if (!verdict.ok) return verdict;
    } else if (this.extension !== undefined && this.target !== 'discard') {
      this.extension.set(bytes, this.extensionFilled);
      this.extensionFilled += bytes.length;
    }
    return this.remaining === 0 ? this.finishData() : OK;
  }

  private finishData(): Verdict<C | ArchiveErrorCode> {
    this.phase = this.padding === 0 ? 'header' : 'padding';
    if (this.target === 'visitor') return this.visitor.entryEnd();
    const extension = this.extension;
    this.extension = undefined;
    if (extension === undefined || this.target === 'discard') return OK;
    if (this.target === 'gnu-name') {
      this.pendingPath = decodeName(extension);
      return OK;
    }
    return this.applyPax(extension);
  }

  private applyPax(bytes: Uint8Array): Verdict<C | ArchiveErrorCode> {
    const records = parsePaxRecords(bytes);
    if (records === undefined) return fail('corrupt', 'corrupt tar archive: malformed pax extended header');
    const path = records.get('path');
    if (path !== undefined) this.pendingPath = path;
    const size = records.get('size');
    if (size !== undefined) {
      if (!/^\d{1,15}$/.test(size)) return fail('corrupt', `corrupt tar archive: pax size "${size}"`);
      this.pendingSize = Number(size);
    }
    return OK;
  }
}

const utf8 = new TextDecoder('utf-8');

function decodeName(bytes: Uint8Array): string {
  const nul = bytes.indexOf(0);
  return utf8.decode(nul === -1 ? bytes : bytes.subarray(0, nul));
}

/** `<length> <key>=<value>\n` records; undefined when malformed. */
export function parsePaxRecords(bytes: Uint8Array): Map<string, string> | undefined {
  const records = new Map<string, string>();
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    if (space === -1) return undefined;
    const digits = utf8.decode(bytes.subarray(at, space));
    const length = /^\d{1,9}$/.test(digits) ? Number(digits) : Number.NaN;
    if (!(length > space - at) || at + length > bytes.length || bytes[at + length - 1] !== 0x0a)
      return undefined;
    const record = utf8.decode(bytes.subarray(space + 1, at + length - 1));
    const equals = record.indexOf('=');
    if (equals <= 0) return undefined;
    records.set(record.slice(0, equals), record.slice(equals + 1));
    at += length;
  }
  return records;
}
