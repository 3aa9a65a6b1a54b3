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

import {
  blockMapping,
  contentLines,
  yamlFail as fail,
  flowItems,
  isNull,
  scalar,
  type YamlEntry,
  type YamlLine,
  YamlSyntaxError,
} from '../../lib/yaml.ts';
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
    if (error instanceof YamlSyntaxError) return { ok: false, reason: `${CONFIG_FILE}: ${error.message}` };
    throw error;
  }
}

function requiredStatuses(lines: YamlLine[]): string[] | null {
  if (lines.length === 0) return null;
  const top = blockMapping(lines);
  const merge = top.get('merge');
  let nested: string[] | null = null;
  if (merge) {
    if (merge.value !== '' && !isNull(merge.value) && merge.value !== '{}')
      fail(merge.line, 'merge must be a mapping');
    const entry =
      merge.children.length > 0 ? blockMapping(merge.children).get('required_statuses') : undefined;
    nested = entry ? statusList(entry) : null;
  }
  const topEntry = top.get('required_statuses');
  const flat = topEntry ? statusList(topEntry) : null;
  if (nested !== null && flat !== null) {
    fail(topEntry?.line ?? null, 'required_statuses is set both at top level and under merge');
  }
  return nested ?? flat;
}

function flakeProtection(lines: YamlLine[]): FlakeProtectionSetting | null {
  if (lines.length === 0) return null;
  const merge = blockMapping(lines).get('merge');
  const entry =
    merge && merge.children.length > 0 ? blockMapping(merge.children).get('flake_protection') : undefined;
  if (entry === undefined || isNull(entry.value)) return null;
  const value = scalar(entry.line, entry.value).toLowerCase();
  const known = FLAKE_PROTECTION.find((v) => v === value);
  if (known === undefined) fail(entry.line, `flake_protection must be one of ${FLAKE_PROTECTION.join(', ')}`);
  return known;
}

/** A list of status names: a block sequence of scalars, a flow sequence, or null. */
function statusList(entry: YamlEntry): string[] | null {
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

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
