// A queue's state is stored as a header row plus a row per PR entry and per test run (migration 0022),
// and a step writes only the rows it changed (src/app/queue/apply.ts). What must hold: the rows read back
// as exactly the state the engine left (key order included: the engine walks runs in it), rows a step
// did not change are not written, a reader never mixes a header and rows of different versions, the
// parsed states shared between requests cannot be changed, and the migration moves states both ways.
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterEach, describe, expect, it } from 'vitest';
import { createCaches } from '../../src/app/caches.ts';
import { applyEvent, queueStateOf } from '../../src/app/queue/apply.ts';
import { openDatabase } from '../../src/db/database.ts';
import type { QueueState } from '../../src/domain/queue/index.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { findQueueById } from '../../src/store/queue/queues.ts';
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
  expect(Object.keys(stored.prs)).toEqual(Object.keys(held.prs));
  expect(Object.keys(stored.runs)).toEqual(Object.keys(held.runs));
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
    expect(prRows.map((r) => String(r.number)).sort()).toEqual(Object.keys(live.prs).sort());
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
      expect(Object.keys(state.prs)).toEqual(['7', '8']);
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
      (stepped.state.prs['7'] as { title: string }).title = 'changed';
    }).toThrow(TypeError);
    expect((await s.queue()).enqueuedPullRequests).toHaveLength(1);
    const row = await findQueueById(db, id);
    if (row === undefined) throw new Error('no queue');
    const read = await queueStateOf({ db, caches: s.t.caches }, row);
    expect(() => read.order.push(99)).toThrow(TypeError);
    expect(() => {
      (read.prs['7']?.history as unknown[]).length = 0;
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
    const migrator = new Migrator({
      db,
      provider: { getMigrations: async () => ({ ...migrations }) },
      ...(onPostgres
        ? {
            migrationTableSchema: (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]
              ?.s as string,
          }
        : {}),
    });
    const down = await migrator.migrateTo('0021_run_hours_by_test');
    expect(down.error).toBeUndefined();
    const whole = await sql<{ state: string }>`select state from merge_queues`.execute(db);
    const state = JSON.parse(whole.rows[0]?.state ?? '{}') as QueueState;
    expect(state).toEqual(stored);
    expect(Object.keys(state.runs)).toEqual(Object.keys(stored.runs));
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    const again = await storedQueueState(db);
    expect(again).toEqual(stored);
    expect(Object.keys(again.runs)).toEqual(Object.keys(stored.runs));
    // The queue goes on from the migrated rows.
    await s.ci('success');
    await s.settle();
    await s.ci('success');
    await s.settle();
    expect((await s.pr(2)).state).toBe('merged');
  }, 300_000);
});
