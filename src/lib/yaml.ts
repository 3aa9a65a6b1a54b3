// A strict subset of YAML for small configuration files: block mappings (nested by indentation),
// block sequences of scalars, flow sequences `[a, "b"]`, plain, 'single' and "double" quoted
// scalars, `#` comments and a leading `---`. Everything else (tabs in indentation, anchors, tags,
// block scalars, several documents) is refused with a YamlSyntaxError naming the line, rather than
// guessed at. The reader of a file walks the entries it knows and ignores the others unparsed.

/** One non-blank line without its comment. */
export interface YamlLine {
  /** 1-based line number in the source. */
  no: number;
  indent: number;
  text: string;
}

/** A `key: value` line with the more-indented lines (or sequence items) under it. */
export interface YamlEntry {
  key: string;
  /** The text after the colon, trimmed ('' when the value is nested). */
  value: string;
  line: YamlLine;
  children: YamlLine[];
}

/** The file is outside the subset; `message` starts with the line number when there is one. */
export class YamlSyntaxError extends Error {}

/** Throws a YamlSyntaxError about `line` (or the whole file when null). */
export function yamlFail(line: YamlLine | null, message: string): never {
  throw new YamlSyntaxError(line ? `line ${line.no}: ${message}` : message);
}

/** Non-blank lines without comments; tabs in indentation and multiple documents are refused. */
export function contentLines(source: string): YamlLine[] {
  const lines: YamlLine[] = [];
  source
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, index) => {
      const line = { no: index + 1, indent: 0, text: '' };
      const indent = /^[ \t]*/.exec(raw)?.[0] ?? '';
      const text = stripComment(raw).trim();
      if (text === '') return;
      if (indent.includes('\t')) yamlFail(line, 'tabs are not allowed in indentation');
      if (text === '---' && lines.length === 0 && indent === '') return;
      if (text === '---' || text === '...') yamlFail(line, 'only one YAML document is supported');
      lines.push({ ...line, indent: indent.length, text });
    });
  return lines;
}

function stripComment(raw: string): string {
  let quote: string | null = null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (quote === '"' && c === '\\') i++;
    else if (quote !== null && c === quote) quote = null;
    else if (quote === null && (c === '"' || c === "'") && (i === 0 || /[\s[,:-]/.test(raw[i - 1] ?? '')))
      quote = c;
    else if (quote === null && c === '#' && (i === 0 || /\s/.test(raw[i - 1] ?? ''))) return raw.slice(0, i);
  }
  return raw;
}

const KEY =
  /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'#?:,[\]{}&*!|>%@`-][^:]*?|-[^\s:][^:]*?)\s*:(?:\s+(.*))?$/;

/** Entries of a block mapping whose keys sit at the indentation of the first line. */
export function blockMapping(lines: YamlLine[]): Map<string, YamlEntry> {
  const base = lines[0]?.indent ?? 0;
  const entries = new Map<string, YamlEntry>();
  let last: YamlEntry | null = null;
  for (const line of lines) {
    if (line.indent < base) yamlFail(line, 'inconsistent indentation');
    const isItem = line.text === '-' || line.text.startsWith('- ');
    if (line.indent > base || (isItem && last?.value === '')) {
      if (!last) yamlFail(line, 'unexpected indentation');
      last.children.push(line);
      continue;
    }
    const match = KEY.exec(line.text);
    if (!match) yamlFail(line, `expected "key: value", got ${JSON.stringify(line.text)}`);
    const key = scalar(line, match[1] ?? '');
    if (entries.has(key)) yamlFail(line, `duplicate key ${JSON.stringify(key)}`);
    last = { key, value: (match[2] ?? '').trim(), line, children: [] };
    entries.set(key, last);
  }
  return entries;
}

/** The scalars of a flow sequence `[a, 'b', "c"]` written on one line. */
export function flowItems(line: YamlLine, value: string): string[] {
  if (!value.endsWith(']')) yamlFail(line, 'unterminated [ list');
  const inner = value.slice(1, -1).trim();
  if (inner === '') return [];
  const parts: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (quote === '"' && c === '\\') i++;
    else if (quote !== null && c === quote) quote = null;
    else if (quote === null && (c === '"' || c === "'")) quote = c;
    else if (quote === null && c === ',') {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  if (quote !== null) yamlFail(line, 'unterminated quoted string');
  const last = inner.slice(start);
  if (last.trim() !== '') parts.push(last);
  return parts.map((part) => scalar(line, part.trim()));
}

/** A plain, 'single' or "double" quoted string (never empty); refuses YAML features outside the subset. */
export function scalar(line: YamlLine, text: string): string {
  let value: string;
  if (text.startsWith('"')) value = doubleQuoted(line, text);
  else if (text.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(text)) yamlFail(line, `bad single-quoted string ${text}`);
    value = text.slice(1, -1).replaceAll("''", "'");
  } else {
    if (/^[[\]{}&*!|>%@`,?]/.test(text) || /:(\s|$)/.test(text) || text.startsWith('- ')) {
      yamlFail(line, `unsupported value ${JSON.stringify(text)}`);
    }
    value = text;
  }
  if (value.trim() === '') yamlFail(line, 'empty name');
  return value;
}

function doubleQuoted(line: YamlLine, text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'string') return value;
  } catch {
    // fall through to the error below
  }
  return yamlFail(line, `bad double-quoted string ${text}`);
}

/** Whether a value written after `key:` means null: nothing, `~` or `null`. */
export function isNull(value: string): boolean {
  return value === '' || value === '~' || value === 'null';
}
