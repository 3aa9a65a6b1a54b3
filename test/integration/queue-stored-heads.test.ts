// A run's heads (the commit of each PR merged into its test branch) are stored once, in the PR entries:
// a run row and its create_test_run action leave them out (src/app/queue/row-shape.ts), and the executor
// builds the branch with the heads of the run in the state. What must hold: the test branches of runs
// restarted behind a failing head still merge exactly each PR's head; rows and actions stored whole
// (before this, or a run whose PR's head moved) are read as they say.
import { afterEach, describe, expect, it } from 'vitest';
import { queueStateOf } from '../../src/app/queue/apply.ts';
import type { PrHead, QueueState } from '../../src/domain/queue/index.ts';
import { findQueueById } from '../../src/store/queue/queues.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { queueId } from '../support/reads.ts';

/** The queue's state as the app reads it from its rows (the held parsed state forgotten first). */
async function readState(s: GitScenario): Promise<QueueState> {
  const db = s.t.db.database.db;
  const id = await queueId(s.t);
  // A held state is found by version: an entry at another version makes the next read parse the rows.
  s.t.caches.queueStates.set(id, -1, {} as QueueState);
  const row = await findQueueById(db, id);
  if (row === undefined) throw new Error('no queue');
  return queueStateOf({ db, caches: s.t.caches }, row);
}

async function storedRunRows(s: GitScenario): Promise<{ id: string; data: string }[]> {
  return s.t.db.database.db.selectFrom('queue_runs').select(['id', 'data']).execute();
}

async function storedActions(s: GitScenario): Promise<{ id: number; action: string }[]> {
  return s.t.db.database.db.selectFrom('queue_actions').select(['id', 'action']).orderBy('id').execute();
}

/** The commit PR n's branch points at on the server. */
const headOf = (s: GitScenario, n: number) => s.bareGit('rev-parse', `refs/heads/feature-${n}`);

/** Whether `commit` is in the history of `tip` on the server. */
function contains(s: GitScenario, tip: string, commit: string): boolean {
  try {
    s.bareGit('merge-base', '--is-ancestor', commit, tip);
    return true;
  } catch {
    return false;
  }
}

describe('run heads stored once, in the PR entries', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('stores restarted runs and their actions without heads, and builds their branches with each PR head', async () => {
    s = await GitScenario.create({ concurrency: 3 });
    const scenario = s;
    for (const n of [1, 2, 3, 4]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` });
    for (const n of [1, 2, 3, 4]) await s.submit(n);
    await s.settle();
    // PR 1 fails: the runs of 2 and 3 restart on a new predicted base, and 4 starts.
    await s.ci('failure', 1);
    await s.settle();
    expect((await s.pr(1)).state).toBe('failed');
    const rows = await storedRunRows(s);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) expect(JSON.parse(row.data)).not.toHaveProperty('prHeads');
    const builds = (await storedActions(s))
      .map((a) => JSON.parse(a.action) as { type: string; prHeads?: PrHead[] })
      .filter((a) => a.type === 'create_test_run');
    expect(builds.length).toBeGreaterThanOrEqual(6);
    for (const a of builds) expect(a).not.toHaveProperty('prHeads');
    // What the app reads back: every head, and each test branch holds exactly those commits.
    const state = await readState(s);
    const live = Object.values(state.runs)
      .filter((r) => r.status === 'in_progress')
      .sort((a, b) => (a.tested[0] ?? 0) - (b.tested[0] ?? 0));
    expect(live.map((r) => r.tested)).toEqual([[2], [3], [4]]);
    for (const run of live) {
      const prs = [...run.dependsOn, ...run.tested];
      expect(run.prHeads).toEqual(prs.map((n) => ({ number: n, sha: headOf(scenario, n) })));
      const tip = run.testBranchSha ?? '';
      for (const n of [1, 2, 3, 4])
        expect(contains(scenario, tip, headOf(scenario, n))).toBe(prs.includes(n));
    }
    await s.ci('success');
    await s.settle();
    await s.ci('success');
    await s.settle();
    expect(s.history().slice(0, 3)).toEqual(['PR 4 (#4)', 'PR 3 (#3)', 'PR 2 (#2)']);
  }, 300_000);

  it('reads runs and create_test_run actions stored whole as they say', async () => {
    s = await GitScenario.create({ concurrency: 2 });
    const scenario = s;
    const db = s.t.db.database.db;
    for (const n of [1, 2]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` });
    for (const n of [1, 2]) await s.submit(n);
    // Not carried out yet: the two create_test_run actions, as an older version stored them (with
    // heads), except that PR 1's head is named as the commit main started at, not PR 1's own.
    const main = s.bareGit('rev-parse', 'refs/heads/main');
    const heads = (n: number) => (n === 1 ? main : headOf(scenario, n));
    for (const row of await storedActions(s)) {
      const action = JSON.parse(row.action) as { type: string; testedPrs: number[]; prHeads?: PrHead[] };
      if (action.type !== 'create_test_run') continue;
      const prs = action.testedPrs[0] === 1 ? [1] : [1, 2];
      action.prHeads = prs.map((n) => ({ number: n, sha: heads(n) }));
      await db
        .updateTable('queue_actions')
        .set({ action: JSON.stringify(action) })
        .where('id', '=', row.id)
        .execute();
    }
    // The runs' rows likewise: stored whole, with the same heads.
    for (const row of await storedRunRows(s)) {
      const run = JSON.parse(row.data) as { dependsOn: number[]; tested: number[]; prHeads?: PrHead[] };
      run.prHeads = [...run.dependsOn, ...run.tested].map((n) => ({ number: n, sha: heads(n) }));
      await db
        .updateTable('queue_runs')
        .set({ data: JSON.stringify(run) })
        .where('id', '=', row.id)
        .execute();
    }
    const read = await readState(s);
    for (const run of Object.values(read.runs)) expect(run.prHeads[0]).toEqual({ number: 1, sha: main });
    await s.settle();
    // Each branch was built with the heads its action named: without PR 1's commit.
    const built = Object.values((await readState(s)).runs).sort(
      (a, b) => (a.tested[0] ?? 0) - (b.tested[0] ?? 0),
    );
    expect(built.map((r) => r.tested)).toEqual([[1], [2]]);
    for (const run of built) {
      const tip = run.testBranchSha ?? '';
      expect(contains(scenario, tip, headOf(scenario, 1))).toBe(false);
      expect(contains(scenario, tip, headOf(scenario, 2))).toBe(run.tested[0] === 2);
    }
  }, 300_000);
});
