// A stable identity for "the same failure": FNV-1a (64-bit) over the normalised headline and top frames.
import { type FailureAnatomy, failureAnatomy } from './anatomy.ts';
import { normaliseLine } from './normalise.ts';

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MAX_LINE = 500;

/** The normalised lines the fingerprint is computed from, for display and debugging. */
export function failureSignature(text: string): string {
  return signatureOf(failureAnatomy(text));
}

function signatureOf({ headline, frames }: FailureAnatomy): string {
  return [headline, ...frames].map((line) => normaliseLine(line).slice(0, MAX_LINE)).join('\n');
}

/** 16 hex digits; equal for failures that differ only in masked details. */
export function failureFingerprint(text: string): string {
  return fingerprintOf(failureAnatomy(text));
}

/** The fingerprint of an already dissected failure. */
export function fingerprintOf(anatomy: FailureAnatomy): string {
  return fnv1a64(signatureOf(anatomy));
}

/** FNV-1a over the UTF-16 code units of `text`. */
export function fnv1a64(text: string): string {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = BigInt.asUintN(64, hash * FNV_PRIME);
  }
  return hash.toString(16).padStart(16, '0');
}
