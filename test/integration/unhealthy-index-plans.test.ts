// test_cases_unhealthy holds FLAKY and BROKEN tests only (migration 0037): SQLite uses a partial index
// only for a query that repeats its condition, so each unhealthy list and count must say it
// (NOT_HEALTHY), or it reads every test of the repository instead. PostgreSQL infers it.
import { CompiledQuery, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as days from '../../src/store/dashboard/repo-days.ts';
import * as lists from '../../src/store/tests/lists.ts';
import { onPostgres } from '../support/database.ts';
import { useTestApp } from '../support/use-test-app.ts';

describe.skipIf(onPostgres)('the unhealthy lists’ index (SQLite)', () => {
  const t = useTestApp();

  it('serves every unhealthy list and count', async () => {
    const db = t.db.database.db;
    const nodes: RootOperationNode[] = [];
    const capture: KyselyPlugin = {
      transformQuery: ({ node }) => {
        nodes.push(node);
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const seen = db.withPlugin(capture);
    const repoId = 'no-such-repository';
    await lists.countByStatus(seen, repoId, 'FLAKY');
    await lists.firstByStatus(seen, repoId, 'BROKEN', 50);
    await days.healthCounts(seen, repoId);
    for (const show of ['unhealthy', 'flaky', 'broken'] as const)
      for (const sort of ['prs', 'name'] as const)
        await days.listIds(seen, repoId, { show, search: '', owner: '' }, sort, { limit: 50, offset: 0 });
    // (By name, the planner may as well read test_cases_by_name in order: not asked here.)
    const unhealthy = nodes
      .map((node) => db.getExecutor().compileQuery(node, { queryId: 'plan' } as never))
      .filter((q) => /"status" (=|in)/.test(q.sql) && !q.sql.includes('order by "name"'));
    expect(unhealthy.length).toBe(6);
    for (const q of unhealthy) {
      const plan = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]),
      );
      expect(plan.rows.map((r) => r.detail).join(' | '), q.sql).toContain('test_cases_unhealthy');
    }
  });
});
