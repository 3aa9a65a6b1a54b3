// A queue's state is stored as a header row plus a row per PR entry and per test run (migration 0022),
// and a step writes only the rows it changed (src/app/queue/apply.ts). What must hold: the rows read back
// as exactly the state the engine left (key order included: the engine walks runs in it), rows a step
// did not change are not written, a reader never mixes a header and rows of different versions, the
// parsed states shared between requests cannot be changed, and the migration moves states both ways.
// A changed row's indexed columns (head_sha; test_branch, test_branch_sha) are assigned only when they
// changed (on SQLite, assigning one rewrites its index entry even to the same value): every column must
// still say what the row's JSON says, and the lookups by commit must find the run.
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterEach, describe, expect, it } from 'vitest';
import { createCaches } from '../../src/app/caches.ts';
import { applyEvent, queueStateOf, rowChanges } from '../../src/app/queue/apply.ts';
import { openDatabase } from '../../src/db/database.ts';
import { type QueueEvent, type QueueState, queueStateFromJson } from '../../src/domain/queue/index.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { archivedRuns } from '../../src/store/queue/archive.ts';
import {
  findQueueById,
  livePrsAtHead,
  runsAtCommitOrBranch,
  saveQueueState,
} from '../../src/store/queue/queues.ts';
import type { Tables } from '../../src/store/schema.ts';
import { onPostgres } from '../support/database.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { storedQueueState } from '../support/queue-rows.ts';
import { queueId, queuePrRows, queueVersion, storedQueueRuns } from '../support/reads.ts';

const sha = (n: number) => n.toString(16).padStart(40, 'c');
const snapshot = (n: number) => ({
  number: n,
  title: `PR ${n}`,
  author: 'dev',
  headSha: sha(n),
  baseSha: sha(1),
  baseBranch: 'main',
  mergeability: 'mergeable' as const,
});

/** The state as the process holds it (the one the next step starts from) for the queue's current version. */
async function heldState(s: GitScenario): Promise<QueueState> {
  const id = await queueId(s.t);
  const held = s.t.caches.queueStates.get(id, await queueVersion(s.t, id));
  if (held === undefined) throw new Error('no state held for the current version');
  return held;
}

async function expectRowsMatchHeld(s: GitScenario): Promise<void> {
  const held = await heldState(s);
  const stored = await storedQueueState(s.t.db.database.db);
  expect(stored).toEqual(held);
  expect(Object.keys(stored)).toEqual(Object.keys(held));
  expect(stored.prs.keys()).toEqual(held.prs.keys());
  expect(Object.keys(stored.runs)).toEqual(Object.keys(held.runs));
}

/** Every stored row's columns agree with its JSON, and the rows read back as the state held. */
async function expectColumnsTrue(scenario: GitScenario): Promise<QueueState> {
  const db = scenario.t.db.database.db;
  const id = await queueId(scenario.t);
  const held = scenario.t.caches.queueStates.get(id, await queueVersion(scenario.t, id));
  expect(held).toBeDefined();
  expect(await storedQueueState(db)).toEqual(held);
  const prs = await db.selectFrom('queue_prs').select(['state', 'head_sha', 'data']).execute();
  for (const row of prs) {
    const e = JSON.parse(row.data) as { state: string; headSha: string };
    expect({ state: row.state, head_sha: row.head_sha }).toEqual({ state: e.state, head_sha: e.headSha });
  }
  const runs = await db
    .selectFrom('queue_runs')
    .select(['status', 'test_branch', 'test_branch_sha', 'data'])
    .execute();
  for (const row of runs) {
    const r = JSON.parse(row.data) as { status: string; testBranch: string; testBranchSha: string | null };
    expect({
      status: row.status,
      test_branch: row.test_branch,
      test_branch_sha: row.test_branch_sha,
    }).toEqual({
      status: r.status,
      test_branch: r.testBranch,
      test_branch_sha: r.testBranchSha,
    });
  }
  return held as QueueState;
}

/** A migrator of the app's migrations on `db` (on PostgreSQL, in the test's schema). */
async function migratorOf(db: Kysely<Tables>): Promise<Migrator> {
  return new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...migrations }) },
    ...(onPostgres
      ? {
          migrationTableSchema: (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]
            ?.s as string,
        }
      : {}),
  });
}

/** Two passing results after PR 1 failed: PR 2 merges (the queue went on from its stored rows). */
async function goesOn(s: GitScenario): Promise<void> {
  await s.ci('success');
  await s.settle();
  await s.ci('success');
  await s.settle();
  expect((await s.pr(2)).state).toBe('merged');
}

describe('queue state stored row by row', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('reads back as exactly the state the engine left, through submissions, failures, restarts and merges', async () => {
    s = await GitScenario.create({ concurrency: 3 });
    for (const n of [1, 2, 3, 4]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` });
    for (const n of [1, 2, 3, 4]) await s.submit(n);
    await s.settle();
    await expectRowsMatchHeld(s);
    expect(Object.keys((await heldState(s)).runs).length).toBeGreaterThan(1);
    // PR 1 fails: the runs behind it restart on a new predicted base (new runs after the old ones).
    await s.ci('failure', 1);
    await s.settle();
    await expectRowsMatchHeld(s);
    await s.ci('success');
    await s.settle();
    await s.ci('success');
    await s.settle();
    await expectRowsMatchHeld(s);
    expect((await s.pr(2)).state).toBe('merged');
    // Finished PRs and runs left the live state: their rows are gone with them.
    const db = s.t.db.database.db;
    const live = await storedQueueState(db);
    const prRows = await queuePrRows(s.t);
    expect(prRows.map((r) => String(r.number)).sort()).toEqual(live.prs.keys().map(String).sort());
    expect((await storedQueueRuns(s.t)).length).toBe(Object.keys(live.runs).length);
  }, 300_000);

  it('does not write again the entries a step did not change', async () => {
    s = await GitScenario.create({ state: 'paused' });
    const db = s.t.db.database.db;
    const id = await queueId(s.t);
    for (const n of [7, 8])
      await applyEvent({ db, caches: s.t.caches }, id, { type: 'pr_submitted', pr: snapshot(n) }, s.clock);
    // Marks PR 7's row; a step that rewrote every entry would put the held entry back over it.
    const marked = (await queuePrRows(s.t)).find((r) => r.number === 7)?.data ?? '';
    const mark = marked.replace('"PR 7"', '"marked"');
    await db.updateTable('queue_prs').set({ data: mark }).where('number', '=', 7).execute();
    const before = await queueVersion(s.t, id);
    await applyEvent(
      { db, caches: s.t.caches },
      id,
      { type: 'pr_cancelled', prNumber: 8, reason: 'closed' },
      s.clock,
    );
    expect(await queueVersion(s.t, id)).toBe(before + 1);
    const after = await queuePrRows(s.t);
    expect(after.find((r) => r.number === 7)?.data).toBe(mark);
    // PR 8 ended: pruning moved it to the archive, so its row is gone.
    expect(after.map((r) => r.number)).toEqual([7]);
  });

  it('answers a queue row read before a save with the state after it, never a mix of the two', async () => {
    s = await GitScenario.create({ state: 'paused' });
    const db = s.t.db.database.db;
    const id = await queueId(s.t);
    await applyEvent({ db, caches: s.t.caches }, id, { type: 'pr_submitted', pr: snapshot(7) }, s.clock);
    const old = await findQueueById(db, id);
    if (old === undefined) throw new Error('no queue');
    await applyEvent({ db, caches: s.t.caches }, id, { type: 'pr_submitted', pr: snapshot(8) }, s.clock);
    // Another process (its own handle, so nothing cached) reading with the row it read before the save.
    const other = openDatabase({
      databaseUrl: s.t.db.env['DATABASE_URL'],
      dataDir: s.t.db.env['MAINLINE_DATA_DIR'] ?? '',
      poolSize: 2,
    });
    try {
      const state = await queueStateOf({ db: other.db, caches: createCaches(s.t.config) }, old);
      // The header counts submissions (nextSeq): an old header with the new rows would differ here.
      expect(state.prs.keys()).toEqual([7, 8]);
      expect(state).toEqual(await storedQueueState(db));
    } finally {
      await other.close();
    }
  });

  it('hands out states that throw when written to, so no request can change what the next step starts from', async () => {
    s = await GitScenario.create({ state: 'paused' });
    const db = s.t.db.database.db;
    const id = await queueId(s.t);
    const stepped = await applyEvent(
      { db, caches: s.t.caches },
      id,
      { type: 'pr_submitted', pr: snapshot(7) },
      s.clock,
    );
    expect(() => {
      (stepped.state.prs.get(7) as { title: string }).title = 'changed';
    }).toThrow(TypeError);
    expect((await s.queue()).enqueuedPullRequests).toHaveLength(1);
    const row = await findQueueById(db, id);
    if (row === undefined) throw new Error('no queue');
    const read = await queueStateOf({ db, caches: s.t.caches }, row);
    expect(() => read.order.push(99)).toThrow(TypeError);
    expect(() => {
      (read.prs.get(7)?.history as unknown[]).length = 0;
    }).toThrow(TypeError);
    expect(() => {
      (read.settings as { concurrency: number }).concurrency = 99;
    }).toThrow(TypeError);
    expect(read).toEqual(await storedQueueState(db));
  });

  it('migration 0022 splits a stored state into rows and puts it back together going down', async () => {
    s = await GitScenario.create({ concurrency: 2 });
    for (const n of [1, 2, 3]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` });
    for (const n of [1, 2, 3]) await s.submit(n);
    await s.settle();
    await s.ci('failure', 1);
    await s.settle();
    const db = s.t.db.database.db;
    const stored = await storedQueueState(db);
    expect(Object.keys(stored.runs).length).toBeGreaterThan(1);
    const migrator = await migratorOf(db);
    const down = await migrator.migrateTo('0021_run_hours_by_test');
    expect(down.error).toBeUndefined();
    const whole = await sql<{ state: string }>`select state from merge_queues`.execute(db);
    const state = queueStateFromJson(whole.rows[0]?.state ?? '{}');
    expect(state).toEqual(stored);
    expect(Object.keys(state.runs)).toEqual(Object.keys(stored.runs));
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    const again = await storedQueueState(db);
    expect(again).toEqual(stored);
    expect(Object.keys(again.runs)).toEqual(Object.keys(stored.runs));
    // The queue goes on from the migrated rows.
    await goesOn(s);
  }, 300_000);

  it('migration 0036 puts entry histories back into their rows and archived runs whole going down, and out again going up', async () => {
    s = await GitScenario.create({ concurrency: 3 });
    for (const n of [1, 2, 3, 4]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` });
    for (const n of [1, 2, 3, 4]) await s.submit(n);
    await s.settle();
    // PR 1 fails: the runs of 2 and 3 are superseded and archived together (one of them without heads).
    await s.ci('failure', 1);
    await s.settle();
    const db = s.t.db.database.db;
    const id = await queueId(s.t);
    const stored = await storedQueueState(db);
    const runRows = async () =>
      db
        .selectFrom('queue_archive')
        .select(['key', 'data'])
        .where('kind', '=', 'run')
        .orderBy('key')
        .execute();
    const before = await runRows();
    expect(before.some((r) => r.data.includes('"prHeadsOf"'))).toBe(true);
    const ids = before.map((r) => r.key);
    const archived = await archivedRuns(db, id, ids);
    expect(
      [...archived.values()].every((r) => r.prHeads.length === r.dependsOn.length + r.tested.length),
    ).toBe(true);
    // Entry rows hold the first two changes of their history, the rest is in parts.
    for (const row of await queuePrRows(s.t))
      expect(JSON.parse(row.data).history).toEqual(stored.prs.get(row.number)?.history.slice(0, 2));
    expect((await db.selectFrom('queue_pr_history').select('number').execute()).length).toBeGreaterThan(0);
    const migrator = await migratorOf(db);
    expect((await migrator.migrateTo('0035_run_hours_pending')).error).toBeUndefined();
    // Down: each entry row holds its whole history, each archived run its heads, as versions before read them.
    for (const row of await queuePrRows(s.t))
      expect(JSON.parse(row.data).history).toEqual(stored.prs.get(row.number)?.history);
    const whole = await runRows();
    expect(whole.some((r) => r.data.includes('"prHeadsOf"'))).toBe(false);
    for (const r of whole) {
      expect(JSON.parse(r.data)).toEqual(archived.get(r.key));
      expect(Object.keys(JSON.parse(r.data))).toEqual(Object.keys(archived.get(r.key) ?? {}));
    }
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    expect(await storedQueueState(db)).toEqual(stored);
    for (const row of await queuePrRows(s.t))
      expect(JSON.parse(row.data).history).toEqual(stored.prs.get(row.number)?.history.slice(0, 2));
    expect(await archivedRuns(db, id, ids)).toEqual(archived);
    // The queue goes on from the migrated rows.
    await goesOn(s);
  }, 300_000);

  it('keeps every indexed column true through a build, a result, a new head and a restart', async () => {
    s = await GitScenario.create({ concurrency: 2 });
    const scenario = s;
    const db = scenario.t.db.database.db;
    const id = await queueId(scenario.t);
    const repoId = (await findQueueById(db, id))?.repo_id ?? '';
    const apply = (event: QueueEvent) =>
      applyEvent({ db, caches: scenario.t.caches }, id, event, scenario.clock);
    for (const n of [7, 8, 9])
      await apply({ type: 'pr_submitted', pr: snapshot(n), checks: [{ name: 'ci', outcome: 'passed' }] });
    let state = await expectColumnsTrue(scenario);
    const runOf = (n: number) => state.prs.get(n)?.runId ?? '';
    const first = runOf(7);
    expect(first).not.toBe('');
    // The test branch is built: the run's commit (an indexed column) changes.
    await apply({ type: 'test_branch_built', runId: first, sha: sha(0x70) });
    state = await expectColumnsTrue(scenario);
    const branch = state.runs[first]?.testBranch ?? '';
    expect((await runsAtCommitOrBranch(db, repoId, sha(0x70), 'none')).map((r) => r.id)).toEqual([first]);
    // CI is running on it: only the run's status and JSON change, its keys stay.
    await apply({ type: 'ci_reported', runId: first, checks: [{ name: 'ci', outcome: 'pending' }] });
    await expectColumnsTrue(scenario);
    expect((await runsAtCommitOrBranch(db, repoId, sha(0x70), 'none')).map((r) => r.id)).toEqual([first]);
    expect((await runsAtCommitOrBranch(db, repoId, 'f'.repeat(40), branch)).map((r) => r.id)).toEqual([
      first,
    ]);
    // PR 7 gets a new head: its row's head (indexed) changes, and the runs built on it restart.
    await apply({ type: 'pr_head_updated', prNumber: 7, headSha: sha(0x77) });
    state = await expectColumnsTrue(scenario);
    expect((await livePrsAtHead(db, [id], sha(0x77))).map((r) => r.queue_id)).toEqual(
      state.prs.has(7) ? [id] : [],
    );
    expect(await livePrsAtHead(db, [id], sha(7))).toEqual([]);
    // A failure ends PR 8's submission and restarts what was behind it.
    const second = runOf(8);
    if (second !== '') {
      await apply({ type: 'test_branch_built', runId: second, sha: sha(0x80) });
      await apply({ type: 'ci_reported', runId: second, checks: [{ name: 'ci', outcome: 'failed' }] });
      await expectColumnsTrue(scenario);
    }
    await apply({ type: 'tick' });
    const held = await expectColumnsTrue(scenario);
    // An entry whose head changed in place (a resubmission over an entry still held) writes its head too.
    const row = await findQueueById(db, id);
    const entry = held.prs.values()[0];
    if (row === undefined || entry === undefined) throw new Error('no queue or no entry');
    const moved = { ...held, prs: held.prs.copy().set(entry.number, { ...entry, headSha: sha(0x99) }) };
    const patch = { header: row.header, wake_at: row.wake_at, updated_at: row.updated_at };
    expect(await saveQueueState(db, id, row.version, patch, rowChanges(held, moved, row.version + 1))).toBe(
      true,
    );
    const heads = await db.selectFrom('queue_prs').select(['number', 'head_sha']).execute();
    expect(heads.find((h) => Number(h.number) === entry.number)?.head_sha).toBe(sha(0x99));
  });
});
