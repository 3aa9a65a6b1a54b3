// Who owns a file: the owners of the last rule whose pattern matches (GitHub's rule).
import type { CodeownersRule } from './parse.ts';

/** Repository-relative form: forward slashes, no leading `./` or `/`. */
export function normaliseRepoPath(filePath: string): string {
  return filePath.replace(/\\/g, '/').replace(/^(?:\.\/|\/)+/, '');
}

/** The last rule matching the path, or null when none does. */
export function matchingRule(rules: readonly CodeownersRule[], filePath: string): CodeownersRule | null {
  const path = normaliseRepoPath(filePath);
  if (path === '') return null;
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i];
    if (rule?.matcher.test(path)) return rule;
  }
  return null;
}

/** The file's owners; empty when no rule matches or the matching rule names nobody. */
export function ownersFor(rules: readonly CodeownersRule[], filePath: string): string[] {
  return [...(matchingRule(rules, filePath)?.owners ?? [])];
}
