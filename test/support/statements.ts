// The statements an app sends to its database while something runs: what the read caches' tests
// count to show a warm read asks the database nothing (or one statement).
import type { CompiledQuery, Kysely } from 'kysely';
import { vi } from 'vitest';
import type { Tables } from '../../src/store/schema.ts';

/** The SQL of every statement `db` executes while `run` runs, in order. */
export async function sentStatements(db: Kysely<Tables>, run: () => Promise<unknown>): Promise<string[]> {
  const executor = db.getExecutor();
  const seen: string[] = [];
  const original = executor.executeQuery.bind(executor);
  const spy = vi.spyOn(executor, 'executeQuery').mockImplementation((query: CompiledQuery, id) => {
    seen.push(query.sql);
    return original(query, id);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return seen;
}
