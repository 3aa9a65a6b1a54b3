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

function globToRegExp(pattern: string): RegExp {
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
