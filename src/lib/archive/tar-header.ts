/** Decoding one 512-byte tar header block (POSIX ustar, GNU and v7 layouts). */
import { type Failure, fail } from './verdict.ts';

export interface RawTarHeader {
  readonly name: string;
  readonly type:
    | 'file'
    | 'directory'
    | 'symlink'
    | 'hardlink'
    | 'character-device'
    | 'block-device'
    | 'fifo'
    | 'pax'
    | 'pax-global'
    | 'gnu-long-name'
    | 'gnu-long-link'
    | 'unsupported';
  readonly size: number;
  /** False for links, devices, FIFOs and directories, whose size field is ignored (as GNU tar does). */
  readonly carriesData: boolean;
}

const TYPES: Readonly<Record<string, RawTarHeader['type']>> = {
  '0': 'file',
  '\0': 'file',
  '7': 'file',
  '1': 'hardlink',
  '2': 'symlink',
  '3': 'character-device',
  '4': 'block-device',
  '5': 'directory',
  '6': 'fifo',
  x: 'pax',
  g: 'pax-global',
  L: 'gnu-long-name',
  K: 'gnu-long-link',
};

const NO_DATA = new Set<RawTarHeader['type']>([
  'hardlink',
  'symlink',
  'character-device',
  'block-device',
  'directory',
  'fifo',
]);

const utf8 = new TextDecoder('utf-8');

function text(block: Uint8Array, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const nul = field.indexOf(0);
  return utf8.decode(nul === -1 ? field : field.subarray(0, nul));
}

/** An octal or base-256 numeric field; undefined when it is neither. */
function numeric(block: Uint8Array, start: number, length: number): number | undefined {
  const first = block[start] ?? 0;
  if (first & 0x80) {
    if (first === 0xff) return undefined; // negative
    let value = first & 0x7f;
    for (let i = 1; i < length; i++) value = value * 256 + (block[start + i] ?? 0);
    return Number.isSafeInteger(value) ? value : undefined;
  }
  const digits = text(block, start, length).trim();
  if (!/^[0-7]*$/.test(digits)) return undefined;
  return digits === '' ? 0 : Number.parseInt(digits, 8);
}

export function isZeroBlock(block: Uint8Array): boolean {
  return block.every((b) => b === 0);
}

/** Whether the header's checksum matches (unsigned, or signed as some old tars wrote it). */
export function hasValidChecksum(block: Uint8Array): boolean {
  const stored = numeric(block, 148, 8);
  if (stored === undefined) return false;
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < 512; i++) {
    const b = i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
    unsigned += b;
    signed += b > 127 ? b - 256 : b;
  }
  return stored === unsigned || stored === signed;
}

function entryName(block: Uint8Array): string {
  const name = text(block, 0, 100);
  // Only POSIX ustar ("ustar\0") has a prefix field; GNU uses those bytes for other things.
  const posix = text(block, 257, 6) === 'ustar';
  const prefix = posix && block[262] === 0 ? text(block, 345, 155) : '';
  return prefix === '' ? name : `${prefix}/${name}`;
}

/** Decodes a non-zero header block. */
export function decodeTarHeader(
  block: Uint8Array,
): { readonly ok: true; readonly header: RawTarHeader } | Failure {
  if (!hasValidChecksum(block)) return fail('corrupt', 'corrupt tar archive: header checksum mismatch');
  const size = numeric(block, 124, 12);
  if (size === undefined) return fail('corrupt', 'corrupt tar archive: unreadable entry size');
  const type = TYPES[String.fromCharCode(block[156] ?? 0)] ?? 'unsupported';
  return { ok: true, header: { name: entryName(block), type, size, carriesData: !NO_DATA.has(type) } };
}
