import fs from 'node:fs';
import path from 'node:path';

/** Folders a wildcard never descends into; a pattern that names one literally still reaches it. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

export interface GlobResult {
  /** Absolute paths of the matching files, sorted, each once. */
  readonly files: string[];
  /** The patterns that matched no file. */
  readonly unmatched: string[];
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

function hasWildcard(segment: string): boolean {
  return /[*?[]/.test(segment);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+^${}()|[\]\\*?]/g, '\\$&');
}

/** One path segment: `*` is any run of characters but `/`, `?` one such character, `[…]` a class. */
function segmentSource(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[' && segment.indexOf(']', i + 2) !== -1) {
      const end = segment.indexOf(']', i + 2);
      const body = segment
        .slice(i + 1, end)
        .replace(/^!/, '^')
        .replace(/\\/g, '\\\\');
      out += `[${body}]`;
      i = end;
    } else out += escapeRegExp(c);
  }
  return out;
}

/** A regular expression for a whole absolute posix pattern; `**` spans any number of folders. */
export function globToRegExp(pattern: string): RegExp {
  const segments = pattern.split('/');
  let source = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '**') source += last ? '.*' : '(?:[^/]+/)*';
    else source += segmentSource(segment) + (last ? '' : '/');
  });
  return new RegExp(`^${source}$`);
}

interface Walk {
  readonly matcher: RegExp;
  readonly maxDepth: number;
  readonly literal: string;
  readonly found: string[];
}

function walk(dir: string, depth: number, w: Walk): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth + 1 >= w.maxDepth) continue;
      if (SKIPPED_DIRS.has(entry.name) && !w.literal.includes(`/${entry.name}/`)) continue;
      walk(full, depth + 1, w);
    } else if (entry.isFile() && w.matcher.test(toPosix(full))) {
      w.found.push(full);
    }
  }
}

/** The files one pattern matches, relative patterns taken from `cwd`. */
function expandOne(pattern: string, cwd: string): string[] {
  const absolute = toPosix(path.resolve(cwd, pattern));
  const segments = absolute.split('/');
  const firstWild = segments.findIndex(hasWildcard);
  if (firstWild === -1) {
    const stat = fs.statSync(absolute, { throwIfNoEntry: false });
    return stat?.isFile() ? [path.resolve(absolute)] : [];
  }
  const base = segments.slice(0, firstWild).join('/') || '/';
  const rest = segments.slice(firstWild);
  const found: string[] = [];
  walk(base, 0, {
    matcher: globToRegExp(absolute),
    maxDepth: rest.includes('**') ? Number.POSITIVE_INFINITY : rest.length,
    literal: `${absolute}/`,
    found,
  });
  return found;
}

/** Expands glob patterns (`**`, `*`, `?`, `[…]`) over the file system. */
export function expandGlobs(patterns: readonly string[], cwd: string): GlobResult {
  const files = new Set<string>();
  const unmatched: string[] = [];
  for (const pattern of patterns) {
    const found = expandOne(pattern, cwd);
    if (found.length === 0) unmatched.push(pattern);
    for (const file of found) files.add(file);
  }
  return { files: [...files].sort(), unmatched };
}
