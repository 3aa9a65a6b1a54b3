import { CompiledQuery, type Kysely, PostgresAdapter, type Transaction } from 'kysely';
import type { Tables } from '../store/schema.ts';
import { copyText } from './pg-copy.ts';

/** Anything queries can run on: the database itself or an open transaction. */
export type Queryable = Kysely<Tables> | Transaction<Tables>;

/**
 * Splits a list for statements with one bound parameter per item: SQLite allows 32,766 parameters
 * per statement and PostgreSQL 65,535; 500 keeps every statement far below both.
 */
export function chunked<T>(items: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Splits keys for `in (...)` lookups: on PostgreSQL in chunks of 5,000 (each statement is a round trip
 * and a plan), on SQLite (no round trip) in chunks of `size`.
 */
export function keyChunks<T>(db: Queryable, items: readonly T[], size = 500): T[][] {
  return chunked(items, db.getExecutor().adapter instanceof PostgresAdapter ? 5000 : size);
}

/**
 * Lets the event loop run (other requests, timers) between the statements of a long piece of work.
 * SQLite statements run synchronously; without this, a 100k-row upload would hold every other request
 * for seconds even though reads use a connection of their own.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

// Statement texts by table, columns, row count and which columns vary (sqliteInsert): module-level, as
// they are bounded by the code's own statements.
const insertTexts = new Map<string, string>();

/** How `insertMany` treats rows whose key is taken. */
export interface InsertOptions {
  readonly chunkRows?: number;
  /** Skip them. */
  readonly ignoreConflicts?: boolean;
  /** Set these columns of the existing row to the new row's values (conflicts on `key`, one column or more). */
  readonly updateOnConflict?: {
    readonly key: string | readonly string[];
    readonly columns: readonly string[];
    /**
     * Most rows are expected to exist (an upsert of known rows): on PostgreSQL they go in as one JSON
     * parameter, not by COPY, which fails on the first existing row and is then done again that way.
     */
    readonly expectConflicts?: boolean;
  };
}

/** The `on conflict` clause of `options` ('' for none). */
function conflictClause(options: InsertOptions): string {
  const update = options.updateOnConflict;
  if (update !== undefined) {
    const key = typeof update.key === 'string' ? [update.key] : update.key;
    return ` on conflict (${columnList(key)}) do update set ${update.columns.map((c) => `"${c}" = excluded."${c}"`).join(', ')}`;
  }
  return options.ignoreConflicts === true ? ' on conflict do nothing' : '';
}

/**
 * Inserts many rows of one shape. Rows must all have the same keys. With `ignoreConflicts`, rows
 * whose key is taken are skipped. Returns the number of rows inserted. It spares the query builder's
 * per-value work on the ingest path (100k rows per large upload):
 * - SQLite: multi-row statements whose text is built once per shape and reused (the driver then
 *   reuses its prepared statement), columns with one value in every row bound once (sqliteInsert);
 * - PostgreSQL: the rows as COPY's text (db/pg-copy.ts); with a conflict clause (COPY has none) as one
 *   JSON parameter, turned back into rows by `json_populate_recordset`; for values neither carries,
 *   one array parameter per column, `unnest`ed. Either way a statement's text (and its parse and
 *   plan) stays small however many rows it carries.
 */
export async function insertMany<T extends Record<string, unknown>>(
  db: Queryable,
  table: keyof Tables & string,
  rows: readonly T[],
  options: InsertOptions = {},
): Promise<number> {
  const first = rows[0];
  if (first === undefined) return 0;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    if (!plainValues(rows)) return insertUnnested(db, table, rows, options);
    // (A savepoint needs a transaction: outside one, rows with a conflict clause go in as JSON.)
    const copy =
      conflictClause(options) === '' || (db.isTransaction && !options.updateOnConflict?.expectConflicts);
    return copy ? insertByCopy(db, table, rows, options) : insertFromJson(db, table, rows, options);
  }
  const columns = Object.keys(first);
  const conflict = conflictClause(options);
  return insertChunks(rows, options.chunkRows ?? 1000, (part) => {
    const values: unknown[] = [];
    for (const row of part) for (const c of columns) values.push(row[c] ?? null);
    return affected(db, sqliteInsert(table, columns, conflict, values, 0, part.length));
  });
}

/**
 * SQLite: one insert of rows `start` to `start + n` of `values` (row after row, each in the order of
 * `columns`), with `conflict` (an `on conflict` clause, or ''). A column with one value in every row
 * (an upload's repository, upload and commit; a new test's status, monitors and times; an upload's
 * run rows' hour and counts) is bound once, in a one-row select joined to the other columns' VALUES,
 * instead of once per row: binding and reading the VALUES are a third or more of what a multi-row
 * statement costs to run (the driver keeps it prepared); a 5,000-test upload's run rows bind ~20,000
 * values instead of 45,000, its new tests' rows ~6 per test instead of 25.
 */
export function sqliteInsert(
  table: string,
  columns: readonly string[],
  conflict: string,
  values: readonly unknown[],
  start: number,
  n: number,
): CompiledQuery {
  const width = columns.length;
  const base = start * width;
  // Which columns are the same in every row (Object.is: 0 and -0 would bind differently).
  const same: boolean[] = new Array(width);
  let shape = '';
  for (let c = 0; c < width; c++) {
    const v = values[base + c];
    let one = true;
    for (let r = 1; r < n && one; r++) one = Object.is(values[base + r * width + c], v);
    same[c] = one;
    shape += one ? '1' : '0';
  }
  // Rows alike in every column stay as many rows: the one-row select alone would insert one.
  if (n > 1 && !same.includes(false)) {
    same[0] = false;
    shape = `0${shape.slice(1)}`;
  }
  const key = `${table}|${columns.join(',')}|${n}|${shape}|${conflict}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    const once: string[] = [];
    const select: string[] = [];
    let varying = 0;
    for (let c = 0; c < width; c++) {
      if (same[c]) {
        once.push(`? as c${c}`);
        select.push(`k.c${c}`);
      } else select.push(`v.column${++varying}`);
    }
    const tuple = `(${new Array(varying).fill('?').join(',')})`;
    const from =
      varying === 0
        ? `(select ${once.join(', ')}) as k`
        : once.length === 0
          ? `(values ${new Array(n).fill(tuple).join(',')}) as v`
          : `(select ${once.join(', ')}) as k, (values ${new Array(n).fill(tuple).join(',')}) as v`;
    // "where true": without it SQLite would read an upsert's "on conflict" as the join's constraint.
    text = `insert into "${table}" (${columnList(columns)}) select ${select.join(', ')} from ${from} where true${conflict}`;
    // Shapes are few (the code's statements, their row counts, which columns vary) but bounded all the same.
    if (insertTexts.size >= 256) insertTexts.clear();
    insertTexts.set(key, text);
  }
  const params: unknown[] = [];
  for (let c = 0; c < width; c++) if (same[c]) params.push(values[base + c]);
  for (let r = 0; r < n; r++) {
    const row = base + r * width;
    for (let c = 0; c < width; c++) if (!same[c]) params.push(values[row + c]);
  }
  return CompiledQuery.raw(text, params);
}

/**
 * Inserts the rows a chunk of `size` at a time, letting the event loop run between chunks; returns
 * the number of rows inserted.
 */
async function insertChunks<T>(
  rows: readonly T[],
  size: number,
  insert: (part: readonly T[]) => Promise<number>,
): Promise<number> {
  let inserted = 0;
  for (const part of chunked(rows, size)) {
    inserted += await insert(part);
    await yieldToEventLoop();
  }
  return inserted;
}

/** Columns as a statement lists them: each quoted, comma-separated. */
function columnList(columns: readonly string[]): string {
  return columns.map((c) => `"${c}"`).join(',');
}

/** Runs an insert; returns the number of rows it inserted. */
async function affected(db: Queryable, query: CompiledQuery): Promise<number> {
  return Number((await db.executeQuery(query)).numAffectedRows ?? 0n);
}

/**
 * Column types of a table (PostgreSQL), for the casts of `unnest`; the same in every schema, and
 * bounded by the schema's tables: kept at module level.
 */
const columnTypes = new Map<string, Map<string, string>>();

async function typesOf(db: Queryable, table: string): Promise<Map<string, string>> {
  let types = columnTypes.get(table);
  if (types === undefined) {
    const { rows } = await db.executeQuery<{ column_name: string; udt_name: string }>(
      CompiledQuery.raw(
        'select column_name, udt_name from information_schema.columns where table_schema = current_schema() and table_name = $1',
        [table],
      ),
    );
    types = new Map(rows.map((r) => [r.column_name, r.udt_name]));
    columnTypes.set(table, types);
  }
  return types;
}

/** `unnest`'s arguments for these columns: parameter i cast to an array of column i's type. */
async function unnestArguments(db: Queryable, table: string, columns: readonly string[]): Promise<string> {
  const types = await typesOf(db, table);
  return columns
    .map((c, i) => {
      const type = types.get(c);
      if (type === undefined) throw new Error(`${table} has no column ${c}`);
      return `$${i + 1}::${type}[]`;
    })
    .join(',');
}

/** True when every value is a string, number, boolean or null: what JSON carries as it is. */
function plainValues(rows: readonly Record<string, unknown>[]): boolean {
  for (const row of rows) {
    for (const key in row) {
      const v = row[key];
      if (v !== null && v !== undefined && typeof v === 'object') return false;
      if (typeof v === 'bigint') return false;
    }
  }
  return true;
}

/** JSON's escape of a lone surrogate (JSON.stringify writes paired ones as characters), not itself escaped. */
const LONE_SURROGATE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/**
 * The rows as JSON text for PostgreSQL. A lone surrogate becomes U+FFFD, as the driver's UTF-8
 * encoding of a text parameter would make it: PostgreSQL refuses its JSON escape. (The HTTP edge
 * already replaces those of requests; this keeps one that comes another way from failing a write.)
 */
function rowsJson(rows: readonly Record<string, unknown>[]): string {
  const json = JSON.stringify(rows);
  return json.includes('\\ud') ? json.replace(LONE_SURROGATE, '$1\\ufffd') : json;
}

/**
 * PostgreSQL: rows as one JSON parameter. The driver's array parameters escaped every element in
 * JavaScript on the request thread; JSON.stringify is native, and the server parses the text once.
 */
async function insertFromJson<T extends Record<string, unknown>>(
  db: Queryable,
  table: string,
  rows: readonly T[],
  options: InsertOptions,
): Promise<number> {
  const statement = jsonInsert(table, Object.keys(rows[0] as T), options);
  return insertChunks(rows, options.chunkRows ?? 10_000, (part) => affected(db, statement(part)));
}

/** An insert of rows given as one JSON parameter, with the conflict clause of `options`. */
function jsonInsert(table: string, columns: readonly string[], options: InsertOptions) {
  const list = columnList(columns);
  const text = `insert into "${table}" (${list}) select ${list} from json_populate_recordset(null::"${table}", $1::json)${conflictClause(options)}`;
  return (rows: readonly Record<string, unknown>[]) => CompiledQuery.raw(text, [rowsJson(rows)]);
}

/** A COPY of these rows (COPY has no conflict clause). */
function copyStatement(table: string, columns: readonly string[], rows: readonly Record<string, unknown>[]) {
  const text = `copy "${table}" (${columnList(columns)}) from stdin`;
  return CompiledQuery.raw(text, [copyText(rows, columns)]);
}

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * PostgreSQL: COPY … FROM STDIN, up to `chunkRows` rows per statement. COPY has no conflict clause:
 * with one (only inside a transaction), each chunk is COPYed in a savepoint and, only when a row's
 * key is taken (COPY fails as a whole), rolled back to it and inserted again with the clause (as
 * JSON). Callers insert rows they looked up first, so a conflict is a race and rare, and COPY costs
 * less than the JSON insert.
 */
async function insertByCopy<T extends Record<string, unknown>>(
  db: Queryable,
  table: string,
  rows: readonly T[],
  options: InsertOptions,
): Promise<number> {
  const columns = Object.keys(rows[0] as T);
  const size = options.chunkRows ?? 10_000;
  if (conflictClause(options) === '')
    return insertChunks(rows, size, (part) => affected(db, copyStatement(table, columns, part)));
  const json = jsonInsert(table, columns, options);
  const run = (text: string) => db.executeQuery(CompiledQuery.raw(text));
  return insertChunks(rows, size, async (part) => {
    await run('savepoint mainline_copy');
    try {
      const inserted = await affected(db, copyStatement(table, columns, part));
      await run('release savepoint mainline_copy');
      return inserted;
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
      await run('rollback to savepoint mainline_copy');
      await run('release savepoint mainline_copy');
      return affected(db, json(part));
    }
  });
}

async function insertUnnested<T extends Record<string, unknown>>(
  db: Queryable,
  table: string,
  rows: readonly T[],
  options: InsertOptions,
): Promise<number> {
  const columns = Object.keys(rows[0] as T);
  const text = `insert into "${table}" (${columnList(columns)}) select * from unnest(${await unnestArguments(db, table, columns)})${conflictClause(options)}`;
  return insertChunks(rows, options.chunkRows ?? 10_000, (part) =>
    affected(
      db,
      CompiledQuery.raw(
        text,
        columns.map((c) => part.map((row) => row[c] ?? null)),
      ),
    ),
  );
}

/** One row's new values, by its key. */
export interface RowUpdate {
  readonly key: string;
  readonly values: Readonly<Record<string, unknown>>;
}

/**
 * Updates rows of one table by key column, each with its own values (rows with no values are
 * skipped). SQLite: a statement per row, its text built once per set of columns (no round trip, the
 * driver reuses the prepared statement). PostgreSQL: rows that set the same columns go in one
 * statement, their values as `unnest`ed arrays, not a round trip per row.
 */
export async function updateMany(
  db: Queryable,
  table: keyof Tables & string,
  keyColumn: string,
  rows: readonly RowUpdate[],
): Promise<void> {
  const groups = new Map<string, { columns: string[]; rows: RowUpdate[] }>();
  for (const row of rows) {
    const columns = Object.keys(row.values).sort();
    if (columns.length === 0) continue;
    const signature = columns.join(',');
    const group = groups.get(signature);
    if (group === undefined) groups.set(signature, { columns, rows: [row] });
    else group.rows.push(row);
  }
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const { columns, rows: group } of groups.values()) {
    if (postgres) {
      const all = [keyColumn, ...columns];
      const text =
        `update "${table}" as t set ${columns.map((c) => `"${c}" = v."${c}"`).join(', ')} ` +
        `from unnest(${await unnestArguments(db, table, all)}) as v(${columnList(all)}) ` +
        `where t."${keyColumn}" = v."${keyColumn}"`;
      for (const part of chunked(group, 10_000)) {
        const params = [part.map((r) => r.key), ...columns.map((c) => part.map((r) => r.values[c] ?? null))];
        await db.executeQuery(CompiledQuery.raw(text, params));
      }
      continue;
    }
    const text = `update "${table}" set ${columns.map((c) => `"${c}" = ?`).join(', ')} where "${keyColumn}" = ?`;
    for (const row of group)
      await db.executeQuery(CompiledQuery.raw(text, [...columns.map((c) => row.values[c] ?? null), row.key]));
  }
}
