import type { Insertable, Selectable } from 'kysely';
import { chunked, type Queryable } from '../../db/bulk.ts';
import type { TestCaseEventsTable } from '../schema.ts';

export type TestCaseEventRow = Selectable<TestCaseEventsTable>;

export async function insertEvents(db: Queryable, rows: Insertable<TestCaseEventsTable>[]): Promise<void> {
  for (const part of chunked(rows, 200)) await db.insertInto('test_case_events').values(part).execute();
}

/** A test's most recent history, newest first; optionally only some kinds. */
export function listEvents(
  db: Queryable,
  testCaseId: string,
  kinds: readonly string[] | undefined,
  limit: number,
): Promise<TestCaseEventRow[]> {
  let query = db.selectFrom('test_case_events').selectAll().where('test_case_id', '=', testCaseId);
  if (kinds !== undefined) query = query.where('kind', 'in', kinds);
  return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}
