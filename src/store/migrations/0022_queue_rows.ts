import { type Kysely, sql } from 'kysely';

/**
 * A queue's live state as a header row plus one row per PR entry and per test run, so an engine step
 * writes what it changed instead of the whole state (issue 26). merge_queues.state becomes `header`:
 * the state with empty `prs` and `runs`. Existing states are split here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('queue_prs')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('head_sha', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('queue_prs_pk', ['queue_id', 'number'])
    .execute();
  await sql`create index queue_prs_head on queue_prs (head_sha)`.execute(db);
  await db.schema
    .createTable('queue_runs')
    .addColumn('queue_id', 'text', (c) => c.notNull().references('merge_queues.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('ord', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('test_branch', 'text', (c) => c.notNull())
    .addColumn('test_branch_sha', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('queue_runs_pk', ['queue_id', 'id'])
    .execute();
  await sql`create index queue_runs_ord on queue_runs (queue_id, ord)`.execute(db);
  await sql`create index queue_runs_sha on queue_runs (test_branch_sha)`.execute(db);
  await sql`create index queue_runs_branch on queue_runs (test_branch)`.execute(db);
  await sql`alter table merge_queues rename column state to header`.execute(db);

  const queues = await sql<{ id: string; header: string }>`select id, header from merge_queues`.execute(db);
  for (const q of queues.rows) {
    const state = JSON.parse(q.header) as { prs: Record<string, PrLike>; runs: Record<string, RunLike> };
    const prs = Object.values(state.prs);
    const runs = Object.values(state.runs);
    for (let i = 0; i < prs.length; i += 200) {
      const part = prs.slice(i, i + 200).map((e) => ({
        queue_id: q.id,
        number: e.number,
        state: e.state,
        head_sha: e.headSha,
        data: JSON.stringify(e),
      }));
      await (db as Kysely<Split>).insertInto('queue_prs').values(part).execute();
    }
    for (let i = 0; i < runs.length; i += 200) {
      const part = runs.slice(i, i + 200).map((r, j) => ({
        queue_id: q.id,
        id: r.id,
        ord: i + j,
        status: r.status,
        test_branch: r.testBranch,
        test_branch_sha: r.testBranchSha,
        data: JSON.stringify(r),
      }));
      await (db as Kysely<Split>).insertInto('queue_runs').values(part).execute();
    }
    const header = JSON.stringify({ ...state, prs: {}, runs: {} });
    await sql`update merge_queues set header = ${header} where id = ${q.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const queues = await sql<{ id: string; header: string }>`select id, header from merge_queues`.execute(db);
  for (const q of queues.rows) {
    const prs = await sql<{ number: number; data: string }>`
      select number, data from queue_prs where queue_id = ${q.id} order by number`.execute(db);
    const runs = await sql<{ id: string; data: string }>`
      select id, data from queue_runs where queue_id = ${q.id} order by ord`.execute(db);
    const state = JSON.parse(q.header) as { prs: Record<string, unknown>; runs: Record<string, unknown> };
    for (const p of prs.rows) state.prs[String(p.number)] = JSON.parse(p.data);
    for (const r of runs.rows) state.runs[r.id] = JSON.parse(r.data);
    await sql`update merge_queues set header = ${JSON.stringify(state)} where id = ${q.id}`.execute(db);
  }
  await sql`alter table merge_queues rename column header to state`.execute(db);
  await db.schema.dropTable('queue_runs').execute();
  await db.schema.dropTable('queue_prs').execute();
}

interface PrLike {
  number: number;
  state: string;
  headSha: string;
}

interface RunLike {
  id: string;
  status: string;
  testBranch: string;
  testBranchSha: string | null;
}

/** The two new tables as this migration writes them (not the app's schema, which may move on). */
interface Split {
  queue_prs: { queue_id: string; number: number; state: string; head_sha: string; data: string };
  queue_runs: {
    queue_id: string;
    id: string;
    ord: number;
    status: string;
    test_branch: string;
    test_branch_sha: string | null;
    data: string;
  };
}
