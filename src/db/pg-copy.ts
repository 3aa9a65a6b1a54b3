// COPY … FROM STDIN through Kysely. Kysely hands a statement to the pool's client as
// `client.query(sql, parameters)` and exposes no client of its own (a transaction's client least of
// all), so each client of the pool learns one more kind of statement: a `copy … from stdin` whose one
// parameter is the data, in COPY's text format (copyText). pg cannot run such a statement otherwise,
// so nothing else is taken for one. Bulk inserts use it (db/bulk.ts insertMany): PostgreSQL parses
// COPY's text several times faster than the same rows as JSON.
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const COPY_FROM_STDIN = /^copy\s[^;]*\sfrom\s+stdin\s*$/i;

/** Teaches a client of the pool to run `copy … from stdin` statements with their data as parameter. */
export function enableCopyFrom(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const patched = (...args: unknown[]): unknown => {
    const [text, values] = args;
    if (
      typeof text === 'string' &&
      Array.isArray(values) &&
      values.length === 1 &&
      typeof values[0] === 'string' &&
      COPY_FROM_STDIN.test(text)
    )
      return copyIn(query, text, values[0]);
    return query(...args);
  };
  client.query = patched as typeof client.query;
}

/** Runs the COPY; answers as an insert of its rows would (Kysely counts an INSERT's rows). */
function copyIn(
  query: (...args: unknown[]) => unknown,
  text: string,
  data: string,
): Promise<{ command: string; rowCount: number; rows: never[] }> {
  return new Promise((resolve, reject) => {
    const stream = query(copyFrom(text)) as ReturnType<typeof copyFrom>;
    stream.on('error', reject);
    stream.on('finish', () => resolve({ command: 'INSERT', rowCount: stream.rowCount, rows: [] }));
    stream.end(data);
  });
}

/** Characters COPY's text format escapes (and NUL, which no text value can hold). */
const SPECIAL = /[\\\n\r\t\0]/;
const SPECIALS = /[\\\n\r\t\0]/g;
const ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\0': '\uFFFD',
};

function copyValue(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'string') return SPECIAL.test(v) ? v.replace(SPECIALS, (c) => ESCAPES[c] as string) : v;
  if (typeof v === 'boolean') return v ? 't' : 'f';
  return String(v);
}

/**
 * Rows in COPY's text format: a line per row, values in `columns` order separated by tabs, null as
 * `\N`. Values must be strings, numbers, booleans or null. A lone surrogate becomes U+FFFD when the
 * text is encoded as UTF-8, as the driver does for a text parameter.
 */
export function copyText(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  const lines: string[] = new Array(rows.length + 1);
  const last = columns.length - 1;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Record<string, unknown>;
    let line = '';
    for (let i = 0; i < last; i++) line += `${copyValue(row[columns[i] as string])}\t`;
    lines[r] = line + copyValue(row[columns[last] as string]);
  }
  lines[rows.length] = '';
  return lines.join('\n');
}
