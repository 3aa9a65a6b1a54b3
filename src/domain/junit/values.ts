// Small pure helpers that turn JUnit attribute strings into values.

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const DECIMAL = /^[+]?(\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
const THOUSANDS = /^\d{1,3}(,\d{3})+(\.\d*)?$/;
/** Before this (1970-01-02) a timestamp is a runner default such as Go's zero time, not a real time. */
const EARLIEST_REAL_TIMESTAMP = 86_400_000;

/** Seconds (`1.5`, `0.`, `1,234.5`) → milliseconds; null when missing, negative or not a number. */
export function parseDurationMs(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (isPlainDecimal(value)) return Math.round(Number(value) * 1_000_000) / 1_000;
  let text = value.trim();
  if (THOUSANDS.test(text)) text = text.replaceAll(',', '');
  if (!DECIMAL.test(text)) return null;
  const seconds = Number(text);
  if (!Number.isFinite(seconds)) return null;
  return Math.round(seconds * 1_000_000) / 1_000;
}

/**
 * Fast path for the common form `123` / `1.25` / `0.`: digits with at most one dot, nothing else.
 * Such text needs no trimming, never matches THOUSANDS, always matches DECIMAL and is finite.
 */
function isPlainDecimal(value: string): boolean {
  const length = value.length;
  if (length === 0 || length > 20) return false;
  let dots = 0;
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    if (code === 0x2e) {
      if (i === 0 || ++dots > 1) return false;
    } else if (code < 0x30 || code > 0x39) {
      return false;
    }
  }
  return true;
}

/** ISO 8601 date-time → epoch ms. No zone means UTC. Null for unparsable or pre-1970 default values. */
export function parseTimestampMs(value: string | undefined): number | null {
  if (value === undefined) return null;
  const match = ISO_TIMESTAMP.exec(value.trim());
  if (match === null) return null;
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const fields = [year, month, day, hour ?? '0', minute ?? '0', second ?? '0'].map(Number);
  if (!fieldsInRange(fields)) return null;
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0, s = 0] = fields;
  const ms = fraction === undefined ? 0 : Math.floor(Number(`0.${fraction}`) * 1000);
  const result = Date.UTC(y, mo - 1, d, h, mi, s, ms) - zoneOffsetMs(zone);
  return result >= EARLIEST_REAL_TIMESTAMP ? result : null;
}

/** Year ≥ 100 (Date.UTC maps 0–99 to 1900–1999), then month, day, hour, minute, second ranges. */
function fieldsInRange(fields: number[]): boolean {
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = fields;
  return (
    year >= 100 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= 31 &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 60
  );
}

function zoneOffsetMs(zone: string | undefined): number {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  return sign * (hours * 60 + minutes) * 60_000;
}

/** A positive integer line number, else null. */
export function parseLine(value: string | undefined): number | null {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return null;
  const line = Number(value);
  return line > 0 && Number.isSafeInteger(line) ? line : null;
}

/** Cuts `text` to at most `max` UTF-16 units without splitting a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Empty or missing attribute → null, otherwise the value cut to `max`. */
export function optionalText(value: string | undefined, max: number): string | null {
  if (value === undefined || value === '') return null;
  return truncate(value, max);
}

/**
 * A copy of `text` that shares no memory with the string it came from. saxes hands out slices
 * (and concatenations of slices) of the whole decoded chunk; keeping such a slice in a record
 * would keep the 64 KB chunk alive with it.
 */
export function detach(text: string): string {
  return ` ${text}`.slice(1);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole Latin-1 range is the point.
const NOT_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * Like `detach`, and stored one byte per character when every character fits (Latin-1): V8 keeps
 * text cut from a chunk that holds any other character (one emoji in a test name is enough) at two
 * bytes per character. Used for failure texts, which are most of the memory a report's attempts hold.
 */
export function compact(text: string): string {
  if (text.length < 64 || NOT_LATIN1.test(text)) return detach(text);
  return Buffer.from(text, 'latin1').toString('latin1');
}

/**
 * Like `optionalText`, but the result is detached (unless `slices`: see JunitParserOptions.keepSlices),
 * and equal to the previous one when the value repeats.
 */
export class KeptText {
  private last: string | null = null;

  constructor(
    private readonly max: number,
    private readonly slices = false,
  ) {}

  of(value: string | undefined): string | null {
    if (value === undefined || value === '') return null;
    const last = this.last;
    if (last !== null && value.length <= this.max && value === last) return last;
    const cut = truncate(value, this.max);
    const kept = this.slices ? cut : detach(cut);
    this.last = kept;
    return kept;
  }
}

/** C0 control characters other than TAB, LF and CR: not allowed in XML 1.0, yet common (ANSI colour codes). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching these characters is the point.
const CONTROL_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g;

/** Replaces raw control characters with U+FFFD; returns the new text and how many were replaced. */
export function replaceControlChars(text: string): { text: string; replaced: number } {
  CONTROL_CHARS.lastIndex = 0;
  if (!CONTROL_CHARS.test(text)) return { text, replaced: 0 };
  let replaced = 0;
  const cleaned = text.replace(CONTROL_CHARS, () => {
    replaced++;
    return '\uFFFD';
  });
  return { text: cleaned, replaced };
}
