// UUID parsing/formatting and name-based UUID v5 (RFC 9562 §5.5) on top of the local SHA-1.
import { sha1 } from '../../lib/sha1.ts';

/** The RFC 9562 URL namespace, used by Trunk for test_case_id. */
export const URL_NAMESPACE = '6ba7b811-9dad-11d1-80b4-00c04fd430c8';

const HEX_32 = /^[0-9a-fA-F]{32}$/;
const HYPHENATED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const encoder = new TextEncoder();

/**
 * Parses the textual forms the Rust `uuid` crate accepts: hyphenated, 32 hex digits,
 * `{braced}` and `urn:uuid:` prefixed, any letter case. Returns null for anything else.
 */
export function parseUuid(text: string): Uint8Array | null {
  const hex = uuidHexDigits(text);
  if (hex === null) return null;
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  }
  return bytes;
}

function uuidHexDigits(text: string): string | null {
  let body = text;
  if (body.toLowerCase().startsWith('urn:uuid:')) body = body.slice(9);
  else if (body.startsWith('{') && body.endsWith('}')) body = body.slice(1, -1);
  if (HYPHENATED.test(body)) return body.replaceAll('-', '');
  if (HEX_32.test(body)) return body;
  return null;
}

// formatUuid writes the ASCII form into a reused buffer and decodes it once: several times faster
// than concatenating 20 small strings, and uuidV5 runs for every test of every upload.
const HEX_DIGITS = encoder.encode('0123456789abcdef');
/** Where the two hex digits of each of the 16 bytes go; the hyphens never move. */
const DIGIT_POSITIONS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const formatted = encoder.encode('00000000-0000-0000-0000-000000000000');
const decoder = new TextDecoder();

/** Lower-case hyphenated form of 16 bytes (missing bytes read as 0). */
export function formatUuid(bytes: Uint8Array): string {
  for (let i = 0; i < 16; i++) {
    const byte = bytes[i] ?? 0;
    const at = DIGIT_POSITIONS[i]!;
    formatted[at] = HEX_DIGITS[byte >>> 4]!;
    formatted[at + 1] = HEX_DIGITS[byte & 0x0f]!;
  }
  return decoder.decode(formatted);
}

/** True when `text` parses as a UUID whose version field is 5 (the variant bits are not checked, as in Trunk). */
export function isUuidV5(text: string): boolean {
  const bytes = parseUuid(text);
  return bytes !== null && (bytes[6]! & 0xf0) === 0x50;
}

/** Name-based UUID v5 of the UTF-8 bytes of `name` in `namespace`. Throws if `namespace` is not a UUID. */
export function uuidV5(name: string, namespace: string = URL_NAMESPACE): string {
  const namespaceBytes = namespace === URL_NAMESPACE ? URL_NAMESPACE_BYTES : parseUuid(namespace);
  if (namespaceBytes === null) throw new Error(`uuidV5: namespace is not a UUID: ${namespace}`);
  // UTF-8 needs at most 3 bytes per UTF-16 code unit.
  const needed = 16 + name.length * 3;
  if (scratch.length < needed) {
    scratch = new Uint8Array(Math.max(needed, scratch.length * 2));
    scratchName = scratch.subarray(16);
  }
  scratch.set(namespaceBytes);
  const { written } = encoder.encodeInto(name, scratchName);
  // The digest is a fresh 20-byte array: set the version and variant in place; formatting reads bytes 0..15.
  const bytes = sha1(scratch, 16 + written);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUuid(bytes);
}

const URL_NAMESPACE_BYTES = parseUuid(URL_NAMESPACE);
/** Reused input buffer: namespace bytes followed by the name's UTF-8 bytes. */
let scratch = new Uint8Array(1024);
/** The part of `scratch` after the namespace, where the name is encoded. */
let scratchName = scratch.subarray(16);
