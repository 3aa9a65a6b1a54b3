// Masks the parts of a failure text that change from run to run (ids, times, ports, paths, values)
// so that two runs of the same failure read the same. Line structure is kept.

const ANSI_ESCAPE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[ -/]*[@-~]`, 'g');

/** The guard of the masks that need a digit. */
const DIGIT = /\d/;

/** A file name worth keeping after its directory is masked: `sum.test.ts`, `db.sqlite`. */
const KEPT_FILE_NAME = /^[A-Za-z_][\w.-]*\.[A-Za-z]{1,6}$/;

/** `/home/runner/work/app/src/a.ts` → `<path>/a.ts`; `/tmp/tmpk3j2x9q` → `<path>`. */
function maskPath(path: string): string {
  const name = path.split(/[\\/]/).at(-1) ?? '';
  return KEPT_FILE_NAME.test(name) ? `<path>/${name}` : '<path>';
}

/**
 * Ordered: earlier masks protect text that later, broader ones would cut up. Each mask has a guard:
 * a substring (or, for digits, a character class) its pattern cannot match without, so a line
 * without it skips the pattern (a cheap scan instead of a regular expression run; the result is
 * the same). Each guard is checked on the line as the earlier masks left it.
 */
export const MASKS: readonly [guard: string | RegExp, RegExp, (match: string) => string][] = [
  // URLs, before paths and ports: http://127.0.0.1:54321/api/v1
  ['://', /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>()]+/gi, () => '<url>'],
  // ISO dates and timestamps: 2026-01-05, 2026-01-05T12:00:00.123Z, 2026-01-05 12:00:00+02:00
  [
    '-',
    /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])/gi,
    () => '<time>',
  ],
  // Times of day: 12:34:56.789
  [':', /\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, () => '<time>'],
  ['-', /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, () => '<uuid>'],
  // Memory addresses 0x7ffd5c1e and Java identity hashes Object@1b6d3586
  ['0', /\b0x[0-9a-f]+\b/gi, () => '<addr>'],
  ['@', /@[0-9a-f]{5,}\b/gi, () => '@<addr>'],
  // Quoted values: "…", '…' (not an apostrophe inside a word), `…`
  ['"', /"(?:[^"\\\n]|\\.)*"/g, () => '<str>'],
  ["'", /(?<!\w)'(?:[^'\\\n]|\\.)*'(?!\w)/g, () => '<str>'],
  ['`', /`[^`\n]*`/g, () => '<str>'],
  // Windows and POSIX paths with at least one separator, keeping a plain file name at the end
  [':\\', /\b[a-z]:\\[^\s:'"()<>]+/gi, maskPath],
  ['/', /(?:~|\.{1,2})?\/?(?:[\w.@+-]+\/)+[\w.@+-]*/g, maskPath],
  // Hex ids with at least one digit and one letter: git shas, hashes, container ids
  [DIGIT, /\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b/gi, () => '<hex>'],
  // Any remaining number, including line numbers, ports, durations and version parts
  [DIGIT, /\d+(?:\.\d+)*/g, () => '<n>'],
];

/** Removes terminal colour codes. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI_ESCAPE, '');
}

/** Masks the volatile parts of one line and collapses its whitespace. */
export function normaliseLine(line: string): string {
  let result = line.includes('\u001b') ? stripAnsi(line) : line;
  for (const [guard, pattern, mask] of MASKS) {
    const possible = typeof guard === 'string' ? result.includes(guard) : guard.test(result);
    if (possible) result = result.replace(pattern, mask);
  }
  return result.replace(/\s+/g, ' ').trim();
}

/** The whole failure text with volatile parts masked, one trimmed line per non-blank line. */
export function normaliseFailure(text: string): string {
  return text
    .split(/\r?\n/)
    .map(normaliseLine)
    .filter((line) => line !== '')
    .join('\n');
}
