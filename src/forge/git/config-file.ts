/**
 * `.mainline.yaml`, read from the head of the target branch, supplies the required statuses when the queue's
 * own settings do not (branch protection comes last; the git forge has none). Supported layout:
 *
 *   merge:
 *     required_statuses:
 *       - build
 *       - test
 *
 * or `required_statuses:` at top level (not both). Lists may also be written `[build, "unit tests"]`;
 * items are plain, 'single' or "double" quoted strings. `#` comments and a leading `---` are allowed; other
 * top-level keys and other keys under `merge:` are ignored (not parsed). Anything else (tabs, anchors,
 * block scalars, nested items, several documents) is reported as an error rather than guessed at.
 * A missing key means "no statuses from this file" (null); an empty list means "none required".
 *
 * `merge.flake_protection: off | ignore_quarantined | retry_flaky` sets how the queue judges a failed
 * run by the tests that failed, when the queue's own setting (updateQueue flakeProtection) is unset.
 */

import { type GitContext, runGit } from './git.ts';
import { branchRef } from './names.ts';
import { peel } from './repos.ts';

/** Outcome of reading required statuses from the repository config file. */
export type RequiredStatusesResult =
  /** serviceConfig is null when there is no file, or the file does not set required_statuses; likewise flakeProtection. */
  | { ok: true; serviceConfig: string[] | null; flakeProtection: FlakeProtectionSetting | null }
  /** The file exists but could not be understood. */
  | { ok: false; reason: string };

export const CONFIG_FILE = '.mainline.yaml';
export const FLAKE_PROTECTION = ['off', 'ignore_quarantined', 'retry_flaky'] as const;
export type FlakeProtectionSetting = (typeof FLAKE_PROTECTION)[number];
const MAX_BYTES = 256 * 1024;

interface Line {
  no: number;
  indent: number;
  text: string;
}

interface Entry {
  key: string;
  value: string;
  line: Line;
  children: Line[];
}

class ConfigSyntaxError extends Error {}

function fail(line: Line | null, message: string): never {
  throw new ConfigSyntaxError(line ? `line ${line.no}: ${message}` : message);
}

/** Required statuses from `.mainline.yaml` at the head of branch (null when the branch or file is absent). */
export async function readRequiredStatuses(ctx: GitContext, branch: string): Promise<RequiredStatusesResult> {
  const head = await peel(ctx, await branchRef(ctx, branch));
  if (head === null) return { ok: true, serviceConfig: null, flakeProtection: null };
  const spec = `${head}:${CONFIG_FILE}`;
  const found = await runGit(ctx, ['rev-parse', '--verify', '--quiet', spec], { okCodes: [1] });
  if (found.code !== 0) return { ok: true, serviceConfig: null, flakeProtection: null };
  const blob = found.stdout.trim();
  const type = (await runGit(ctx, ['cat-file', '-t', blob])).stdout.trim();
  if (type !== 'blob') return { ok: false, reason: `${CONFIG_FILE} is a ${type}, not a file` };
  const size = Number((await runGit(ctx, ['cat-file', '-s', blob])).stdout.trim());
  if (size > MAX_BYTES)
    return { ok: false, reason: `${CONFIG_FILE}: file is larger than ${MAX_BYTES} bytes` };
  const { stdout } = await runGit(ctx, ['cat-file', 'blob', blob]);
  return parseMainlineConfig(stdout);
}

/** Parse the content of `.mainline.yaml`. */
export function parseMainlineConfig(source: string): RequiredStatusesResult {
  try {
    if (Buffer.byteLength(source) > MAX_BYTES) fail(null, `file is larger than ${MAX_BYTES} bytes`);
    const lines = contentLines(source);
    return { ok: true, serviceConfig: requiredStatuses(lines), flakeProtection: flakeProtection(lines) };
  } catch (error) {
    if (error instanceof ConfigSyntaxError) return { ok: false, reason: `${CONFIG_FILE}: ${error.message}` };
    throw error;
  }
}

function requiredStatuses(lines: Line[]): string[] | null {
  if (lines.length === 0) return null;
  const top = mapping(lines);
  const merge = top.get('merge');
  let nested: string[] | null = null;
  if (merge) {
    if (merge.value !== '' && !isNull(merge.value) && merge.value !== '{}')
      fail(merge.line, 'merge must be a mapping');
    const entry = merge.children.length > 0 ? mapping(merge.children).get('required_statuses') : undefined;
    nested = entry ? statusList(entry) : null;
  }
  const topEntry = top.get('required_statuses');
  const flat = topEntry ? statusList(topEntry) : null;
  if (nested !== null && flat !== null) {
    fail(topEntry?.line ?? null, 'required_statuses is set both at top level and under merge');
  }
  return nested ?? flat;
}

function flakeProtection(lines: Line[]): FlakeProtectionSetting | null {
  if (lines.length === 0) return null;
  const merge = mapping(lines).get('merge');
  const entry =
    merge && merge.children.length > 0 ? mapping(merge.children).get('flake_protection') : undefined;
  if (entry === undefined || isNull(entry.value)) return null;
  const value = scalar(entry.line, entry.value).toLowerCase();
  const known = FLAKE_PROTECTION.find((v) => v === value);
  if (known === undefined) fail(entry.line, `flake_protection must be one of ${FLAKE_PROTECTION.join(', ')}`);
  return known;
}

/** Non-blank lines without comments; tabs in indentation and multiple documents are refused. */
function contentLines(source: string): Line[] {
  const lines: Line[] = [];
  source
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, index) => {
      const line = { no: index + 1, indent: 0, text: '' };
      const indent = /^[ \t]*/.exec(raw)?.[0] ?? '';
      const text = stripComment(raw).trim();
      if (text === '') return;
      if (indent.includes('\t')) fail(line, 'tabs are not allowed in indentation');
      if (text === '---' && lines.length === 0 && indent === '') return;
      if (text === '---' || text === '...') fail(line, 'only one YAML document is supported');
      lines.push({ ...line, indent: indent.length, text });
    });
  return lines;
}

function stripComment(raw: string): string {
  let quote: string | null = null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (quote === '"' && c === '\\') i++;
    else if (quote !== null && c === quote) quote = null;
    else if (quote === null && (c === '"' || c === "'") && (i === 0 || /[\s[,:-]/.test(raw[i - 1] ?? '')))
      quote = c;
    else if (quote === null && c === '#' && (i === 0 || /\s/.test(raw[i - 1] ?? ''))) return raw.slice(0, i);
  }
  return raw;
}

const KEY =
  /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'#?:,[\]{}&*!|>%@`-][^:]*?|-[^\s:][^:]*?)\s*:(?:\s+(.*))?$/;

/** Entries of a block mapping whose keys sit at the indentation of the first line. */
function mapping(lines: Line[]): Map<string, Entry> {
  const base = lines[0]?.indent ?? 0;
  const entries = new Map<string, Entry>();
  let last: Entry | null = null;
  for (const line of lines) {
    if (line.indent < base) fail(line, 'inconsistent indentation');
    const isItem = line.text === '-' || line.text.startsWith('- ');
    if (line.indent > base || (isItem && last?.value === '')) {
      if (!last) fail(line, 'unexpected indentation');
      last.children.push(line);
      continue;
    }
    const match = KEY.exec(line.text);
    if (!match) fail(line, `expected "key: value", got ${JSON.stringify(line.text)}`);
    const key = scalar(line, match[1] ?? '');
    if (entries.has(key)) fail(line, `duplicate key ${JSON.stringify(key)}`);
    last = { key, value: (match[2] ?? '').trim(), line, children: [] };
    entries.set(key, last);
  }
  return entries;
}

/** A list of status names: a block sequence of scalars, a flow sequence, or null. */
function statusList(entry: Entry): string[] | null {
  const { value, line, children } = entry;
  if (value !== '' && children.length > 0) fail(line, 'required_statuses has both a value and nested lines');
  if (isNull(value) && children.length === 0) return null;
  if (value.startsWith('[')) return unique(flowItems(line, value));
  if (value !== '') fail(line, 'required_statuses must be a list');
  const indent = children[0]?.indent ?? 0;
  const items = children.map((child) => {
    if (child.indent !== indent) fail(child, 'nested values under required_statuses are not supported');
    if (!child.text.startsWith('- ')) fail(child, 'expected a list item "- name"');
    return scalar(child, child.text.slice(2).trim());
  });
  return unique(items);
}

function flowItems(line: Line, value: string): string[] {
  if (!value.endsWith(']')) fail(line, 'unterminated [ list');
  const inner = value.slice(1, -1).trim();
  if (inner === '') return [];
  const parts: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (quote === '"' && c === '\\') i++;
    else if (quote !== null && c === quote) quote = null;
    else if (quote === null && (c === '"' || c === "'")) quote = c;
    else if (quote === null && c === ',') {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  if (quote !== null) fail(line, 'unterminated quoted string');
  const last = inner.slice(start);
  if (last.trim() !== '') parts.push(last);
  return parts.map((part) => scalar(line, part.trim()));
}

/** A plain, 'single' or "double" quoted string; refuses YAML features this parser does not implement. */
function scalar(line: Line, text: string): string {
  let value: string;
  if (text.startsWith('"')) value = doubleQuoted(line, text);
  else if (text.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(text)) fail(line, `bad single-quoted string ${text}`);
    value = text.slice(1, -1).replaceAll("''", "'");
  } else {
    if (/^[[\]{}&*!|>%@`,?]/.test(text) || /:(\s|$)/.test(text) || text.startsWith('- ')) {
      fail(line, `unsupported value ${JSON.stringify(text)}`);
    }
    value = text;
  }
  if (value.trim() === '') fail(line, 'empty name');
  return value;
}

function doubleQuoted(line: Line, text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'string') return value;
  } catch {
    // fall through to the error below
  }
  return fail(line, `bad double-quoted string ${text}`);
}

function isNull(value: string): boolean {
  return value === '' || value === '~' || value === 'null';
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
