// Monitor branch scopes (flaky.md §a.2): `*` is any run of characters including `/`,
// `?` exactly one character, `**` the same as `*`; everything else is literal.

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
 * Compiled patterns, by pattern: every test an upload re-evaluates runs each monitor's matcher (~5k
 * tests per large upload), and a repository has a handful of patterns. (No `g` flag: `test` keeps no
 * state, so one RegExp serves every caller.)
 */
const compiled = new Map<string, RegExp>();
const MAX_COMPILED = 1000;

function globToRegExp(pattern: string): RegExp {
  let regexp = compiled.get(pattern);
  if (regexp === undefined) {
    if (compiled.size >= MAX_COMPILED) compiled.clear();
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
