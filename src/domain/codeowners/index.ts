export { matchingRule, normaliseRepoPath, ownersFor } from './match.ts';
export type { CodeownersProblem, CodeownersRule, ParsedCodeowners } from './parse.ts';
export { parseCodeowners } from './parse.ts';
export { patternToRegExp } from './pattern.ts';
