// Monitor branch scopes (flaky.md §a.2): `*` is any run of characters including `/`,
// `?` exactly one character, `**` the same as `*`; everything else is literal.
import { Lru } from '../../lib/lru.ts';

/** Whether `branch` matches one glob pattern. */
export function matchesBranchPattern(pattern: string, branch: string): boolean {
  return globToRegExp(pattern).test(branch);
}

/** Whether `branch` matches any of the patterns; an empty list matches nothing. */
export function matchesAnyBranch(patterns: readonly string[], branch: string): boolean {
  return patterns.some((pattern) => matchesBranchPattern(pattern, branch));
}

/** A predicate for repeated use: compiles the patterns once. */
export function branchMatcher(patterns: readonly string[]): (branch: string) => boolean {
  const regexps = patterns.map(globToRegExp);
  return (branch) => regexps.some((regexp) => regexp.test(branch));
}

/**
 * Compiled patterns, by pattern, least recently used dropped first: every test an upload re-evaluates
 * runs each monitor's matcher (~5k tests per large upload), and a repository has a handful of
 * patterns. Kept at module level: a pattern always compiles to the same RegExp (no `g` flag, so
 * `test` keeps no state and one serves every caller), and the bound keeps user-chosen patterns from
 * growing it.
 */
const compiled = new Lru<RegExp>(1000);

function globToRegExp(pattern: string): RegExp {
  let regexp = compiled.get(pattern);
  if (regexp === undefined) {
    regexp = compileGlob(pattern);
    compiled.set(pattern, regexp);
  }
  return regexp;
}

function compileGlob(pattern: string): RegExp {
  let source = '';
  let previous = '';
  for (const char of pattern) {
    if (char === '*' && previous === '*') continue;
    previous = char;
    if (char === '*') {
      source += '.*';
    } else if (char === '?') {
      source += '.';
    } else {
      source += char.replace(/[\\^$.|+()[\]{}*?]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 's');
}
