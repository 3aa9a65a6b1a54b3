// CODEOWNERS path patterns, GitHub flavour of gitignore (https://docs.github.com/…/about-code-owners):
// - a leading `/`, or a `/` inside the pattern, anchors it at the repository root; otherwise it
//   matches at any depth (`*.js`, `apps/`);
// - `*` matches within one path segment, `?` one character other than `/`;
// - `**/` at the start or `/**/` in the middle match any number of directories, `/**` at the end
//   everything inside;
// - a trailing `/` matches only what is inside that directory;
// - a pattern ending in `/*` matches only the direct children (`docs/*` does not own `docs/a/b.md`);
// - anything else also owns everything below a directory of that name;
// - matching ignores case.

/** The pattern as a regular expression over a normalised repository path (no leading `/`). */
export function patternToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/^\/+/, '').replace(/\/+$/, '');
  const anchored = pattern.startsWith('/') || body.includes('/');
  const directoryOnly = pattern.endsWith('/');
  const directChildrenOnly = pattern.endsWith('/*');
  const prefix = anchored ? '^' : '^(?:.*/)?';
  let suffix = '(?:/.*)?$';
  if (directoryOnly) suffix = '/.+$';
  else if (directChildrenOnly) suffix = '$';
  return new RegExp(prefix + segmentsToSource(body.split('/')) + suffix, 'i');
}

function segmentsToSource(segments: readonly string[]): string {
  let source = '';
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '**') source += last ? '.*' : '(?:.*/)?';
    else source += globSegment(segment) + (last ? '' : '/');
  });
  return source;
}

function globSegment(segment: string): string {
  let source = '';
  for (const char of segment) {
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return source;
}
