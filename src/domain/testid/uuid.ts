// UUID parsing/formatting and name-based UUID v5 (RFC 9562 §5.5) on top of the local SHA-1.
import { sha1 } from './sha1.ts';

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

/** Lower-case hyphenated form of 16 bytes. */
export function formatUuid(bytes: Uint8Array): string {
  let hex = '';
  for (let i = 0; i < 16; i++) {
    hex += (bytes[i] ?? 0).toString(16).padStart(2, '0');
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** True when `text` parses as a UUID whose version field is 5 (the variant bits are not checked, as in Trunk). */
export function isUuidV5(text: string): boolean {
  const bytes = parseUuid(text);
  return bytes !== null && (bytes[6]! & 0xf0) === 0x50;
}

/** Name-based UUID v5 of the UTF-8 bytes of `name` in `namespace`. Throws if `namespace` is not a UUID. */
export function uuidV5(name: string, namespace: string = URL_NAMESPACE): string {
  const namespaceBytes = parseUuid(namespace);
  if (namespaceBytes === null) throw new Error(`uuidV5: namespace is not a UUID: ${namespace}`);
  const nameBytes = encoder.encode(name);
  const input = new Uint8Array(16 + nameBytes.length);
  input.set(namespaceBytes);
  input.set(nameBytes, 16);
  const bytes = sha1(input).slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUuid(bytes);
}
