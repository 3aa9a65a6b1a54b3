import type { ErrorDetail } from '../domain/errors.ts';
import { AppError } from '../domain/errors.ts';

/** The shape of one schema-validation error as TypeBox (and Ajv) report it. */
export interface SchemaIssue {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

function jsonPath(root: string, pointer: string, extra?: string): string {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) segments.push(extra);
  return segments.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : `${acc}.${s}`), root);
}

function expectedFor(issue: SchemaIssue): string {
  const p = issue.params;
  switch (issue.keyword) {
    case 'required':
      return 'a value: this field is required';
    case 'type':
      return `${article(String(p['type']))} ${p['type']}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `a number ${p['comparison']} ${p['limit']}`;
    case 'minLength':
      return `a string of at least ${p['limit']} character${p['limit'] === 1 ? '' : 's'}`;
    case 'maxLength':
      return `a string of at most ${p['limit']} characters`;
    case 'minItems':
      return `an array of at least ${p['limit']} items`;
    case 'maxItems':
      return `an array of at most ${p['limit']} items`;
    case 'pattern':
      return `a string matching ${p['pattern']}`;
    case 'format':
      return `a valid ${p['format']}`;
    case 'enum':
      return `one of ${(p['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `the value ${JSON.stringify(p['allowedValue'])}`;
    case 'additionalProperties':
      return 'no other properties';
    default:
      return issue.message ?? `a value satisfying ${issue.keyword}`;
  }
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

/** Required-property issues name each missing property as its own field. */
function missingProperties(issue: SchemaIssue): string[] {
  const p = issue.params;
  if (Array.isArray(p['requiredProperties'])) return p['requiredProperties'].map(String);
  if (typeof p['missingProperty'] === 'string') return [p['missingProperty']];
  return [];
}

/** anyOf of constants (our enums) collapses to one "one of A, B" detail per field. */
function collapseAnyOf(issues: SchemaIssue[]): SchemaIssue[] {
  const byPath = new Map<string, unknown[]>();
  for (const i of issues) {
    if (i.keyword === 'const' && /\/anyOf\/\d+$/.test(i.schemaPath)) {
      byPath.set(i.instancePath, [...(byPath.get(i.instancePath) ?? []), i.params['allowedValue']]);
    }
  }
  const out: SchemaIssue[] = [];
  for (const i of issues) {
    const consts = byPath.get(i.instancePath);
    if (consts === undefined) out.push(i);
    else if (i.keyword === 'anyOf') out.push({ ...i, keyword: 'enum', params: { allowedValues: consts } });
  }
  return out;
}

/** Turns schema issues into details that each name a field by JSONPath and say what was expected. */
export function toDetails(issues: readonly SchemaIssue[], part: string): ErrorDetail[] {
  const root = part === 'body' ? '$' : `$${part}`;
  const details: ErrorDetail[] = [];
  for (const issue of collapseAnyOf([...issues])) {
    if (issue.keyword === 'required') {
      for (const prop of missingProperties(issue)) {
        const path = jsonPath(root, issue.instancePath, prop);
        details.push({ path, expected: expectedFor(issue), message: `${path} is required` });
      }
      continue;
    }
    const path = jsonPath(root, issue.instancePath);
    const expected = expectedFor(issue);
    details.push({ path, expected, message: `${path} must be ${expected}` });
  }
  const seen = new Set<string>();
  return details.filter((d) => !seen.has(d.message) && seen.add(d.message));
}

/**
 * The JSON path of the first string (or key) holding a NUL character, if any. PostgreSQL cannot store
 * NUL in text, and no field of this API has a use for it, so it is refused at the edge on both engines.
 */
export function findNul(value: unknown, path = '$', depth = 0): string | undefined {
  const below = nulBelow(value, depth);
  return below === undefined ? undefined : path + below;
}

/**
 * Where under `value` the first NUL is, as a JSON path suffix ('' for the value itself). The suffix is
 * built only on the way back from a find: a walk that finds nothing makes no path strings.
 */
function nulBelow(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? '' : undefined;
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulBelow(value[i], depth + 1);
      if (found !== undefined) return `[${i}]${found}`;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key.includes('\u0000')) return `.${key}`;
    const found = nulBelow((value as Record<string, unknown>)[key], depth + 1);
    if (found !== undefined) return `.${key}${found}`;
  }
  return undefined;
}

/** String methods of ES2024 (Node 20 has them; the TypeScript lib here is ES2023). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * The value with every unpaired surrogate in its strings replaced by U+FFFD (objects and arrays are
 * changed in place). JSON can carry one (`"\ud800"`, e.g. a title cut in the middle of an emoji);
 * PostgreSQL's driver would store it as one U+FFFD and SQLite's as three, so both get one here.
 */
export function wellFormedStrings(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const s = value as unknown as WellFormed;
    return s.isWellFormed() ? value : s.toWellFormed();
  }
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = wellFormedStrings(value[i], depth + 1);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const child = record[key];
    if (typeof child === 'string' || (child !== null && typeof child === 'object'))
      record[key] = wellFormedStrings(child, depth + 1);
  }
  return value;
}

/** A 400 naming the field with a NUL character. */
export function nulError(path: string): AppError {
  const message = `${path} contains a NUL character (\\u0000), which is not allowed`;
  return new AppError('VALIDATION_FAILED', message, {
    details: [{ path, expected: 'text without NUL characters', message }],
  });
}
