// The rollups' bulk upsert: flat rows into test_run_hours and test_failure_hours (store/uploads/rollups-write.ts),
// the failing-tests windows (store/dashboard/failing.ts) and the duration tables
// (store/uploads/duration-writes.ts, which is handed it), one statement shape per engine.
import { CompiledQuery, PostgresAdapter } from 'kysely';
import { type Queryable, sqliteInsert, yieldToEventLoop } from '../../db/bulk.ts';

export type Column = readonly [name: string, pgType: string];

/**
 * Inserts rows (`values`: row after row, each in the order of `columns`, the first the repository's
 * id, the same in every row), adding to the row of a taken key as `set` says. No key may appear twice
 * in one call (PostgreSQL refuses to update a row twice in one statement). SQLite: multi-row
 * statements whose text is reused, a column with one value in every row of a statement bound once
 * (db/bulk.ts sqliteInsert); PostgreSQL: the repository once, the other columns as `unnest`ed arrays,
 * the numbers' as one comma-separated text each (the driver's array parameters quote and escape every
 * element in JavaScript: ~45,000 of them for a 5,000-test upload).
 */
export async function upsert(
  db: Queryable,
  table:
    | 'test_run_hours'
    | 'test_failure_hours'
    | 'test_duration_means'
    | 'repo_time_days'
    | 'test_failing_windows',
  columns: readonly Column[],
  key: string,
  set: string,
  values: readonly unknown[],
): Promise<void> {
  const width = columns.length;
  if (values.length % width !== 0) throw new Error(`${table}: ${values.length} values for rows of ${width}`);
  const count = values.length / width;
  if (count === 0) return;
  const names = columns.map(([c]) => `"${c}"`).join(',');
  const conflict = ` on conflict (${key}) do update set ${set}`;
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const numeric = (type: string) => type === 'int4' || type === 'int8' || type === 'float8';
    const args = columns
      .slice(1)
      .map(([, type], i) =>
        numeric(type) ? `string_to_array($${i + 2}, ',')::${type}[]` : `$${i + 2}::${type}[]`,
      )
      .join(',');
    const text = `insert into "${table}" (${names}) select $1::text, u.* from unnest(${args}) as u${conflict}`;
    const repoId = values[0];
    for (let start = 0; start < count; start += 10_000) {
      const end = Math.min(count, start + 10_000);
      const params: unknown[] = [repoId];
      for (let i = 1; i < width; i++) {
        const column: unknown[] = new Array(end - start);
        for (let r = start; r < end; r++) column[r - start] = values[r * width + i] ?? null;
        params.push(numeric((columns[i] as Column)[1]) ? column.join(',') : column);
      }
      for (let r = start; r < end; r++)
        if (values[r * width] !== repoId) throw new Error(`rows of ${table} for several repositories`);
      await db.executeQuery(CompiledQuery.raw(text, params));
    }
    return;
  }
  const plain = columns.map(([c]) => c);
  for (let start = 0; start < count; start += 1000) {
    const n = Math.min(1000, count - start);
    await db.executeQuery(sqliteInsert(table, plain, conflict, values, start, n));
    await yieldToEventLoop();
  }
}
