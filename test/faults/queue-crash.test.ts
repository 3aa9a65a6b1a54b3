import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_IDENTITY, DEFAULT_TIMEOUT_MS } from '../../src/forge/git/git.ts';
import { mergePullRequest } from '../../src/forge/git/merge.ts';
import { LEASE_MS } from '../../src/runner/queue-runner.ts';
import { setPullRequestState } from '../../src/store/forge/git-prs.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';
import { ORG, post200, randomInt, ServerProcess, serverEnv, waitFor } from './support/cluster.ts';
import { FakeCi, GitRemote, prTitle, squashSubject } from './support/git-remote.ts';
import { awaitTakeover, readQueue, retriedActions } from './support/queue-state.ts';

/**
 * Crash safety of the merge queue on one server: SIGKILL at different points of a queue's work (right
 * after a submit, while test branches are being built, between merges after a random number of them),
 * restart on the same database and git root, and the queue still merges every PR exactly once. Runs on
 * SQLite, or on PostgreSQL when DATABASE_URL is set.
 */

const REPO = { host: 'git.example', owner: ORG, name: 'app' };
const QUEUE = { repo: REPO, targetBranch: 'main' };
const POLL_MS = '100';
/** Beyond LEASE_MS: a few runner passes and a server start. */
const TAKEOVER_SLACK_MS = 5_000;

describe(`crash during queue work (one server, ${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let db: TestDatabase;
  let root: string;
  let server: ServerProcess | undefined;
  let ci: FakeCi | undefined;

  beforeEach(async () => {
    db = await createTestDatabase({ migrate: false });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-faults-queue-'));
  });
  afterEach(async () => {
    await ci?.stop();
    ci = undefined;
    await server?.kill();
    server = undefined;
    await db.cleanup();
    fs.rmSync(root, { recursive: true, force: true });
  });

  const env = (pollMs = POLL_MS) =>
    serverEnv({ ...db.env, MAINLINE_GIT_ROOT: path.join(root, 'git'), MAINLINE_QUEUE_POLL_MS: pollMs });

  /** Submits PR n and must be answered 200 (the submission is then durable). */
  const submit = (n: number) =>
    post200(server!.url, '/v1/submitPullRequest', { ...QUEUE, pr: { number: n } });

  const squashCount = (remote: GitRemote, n: number) =>
    remote.history().filter((s) => s === squashSubject(n)).length;

  async function expectAllMergedOnce(remote: GitRemote, prs: readonly number[]): Promise<void> {
    // Settled: every PR merged (read through the API, which falls back to the archive), nothing left in
    // the outbox, every test branch deleted.
    await waitFor(
      'every PR to be merged',
      async () => {
        for (const n of prs) {
          const res = await post200(server!.url, '/v1/getSubmittedPullRequest', {
            ...QUEUE,
            pr: { number: n },
          });
          if (res.json.state !== 'merged') return false;
        }
        return true;
      },
      { timeoutMs: LEASE_MS + 30_000, intervalMs: 200 },
    );
    await waitFor(
      'the outbox to drain and the test branches to go',
      async () =>
        (await readQueue(db.database.db, REPO)).pendingActions.length === 0 &&
        remote.testBranches().length === 0,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const history = remote.history();
    expect(history.at(-1)).toBe('Initial commit');
    expect([...history.slice(0, -1)].sort(), 'each PR is on main exactly once').toEqual(
      prs.map(squashSubject).sort(),
    );
    for (const n of prs) expect(remote.bareGit('show', `main:change-${n}.txt`)).toBe(`change ${n}`);
    const queue = await post200(server!.url, '/v1/getQueue', QUEUE);
    expect(queue.json).toMatchObject({ state: 'running', enqueuedPullRequests: [] });
    for (const n of prs) {
      const pr = await post200(server!.url, '/v1/getSubmittedPullRequest', { ...QUEUE, pr: { number: n } });
      expect(pr.json, `PR ${n}`).toMatchObject({ state: 'merged' });
    }
  }

  /** SIGKILLs the server and starts it again; answers how long until the new process drove the queue again. */
  async function crashAndRestart(): Promise<number> {
    await server!.kill();
    const killedAt = Date.now();
    const dead = (await readQueue(db.database.db, REPO)).leaseOwner;
    await server!.start();
    // On SQLite the restarted server keeps its runner id (data folder) and resumes at once; with a fresh
    // id (PostgreSQL) the dead process's lease must run out first (LEASE_MS after its last pass).
    const { afterMs } = await awaitTakeover(db.database.db, REPO, dead, killedAt, LEASE_MS + 15_000);
    expect(afterMs, 'the restarted server drives the queue once the lease expires').toBeLessThanOrEqual(
      LEASE_MS + TAKEOVER_SLACK_MS,
    );
    return afterMs;
  }

  it('merges every PR exactly once across kills after a submit, mid-build and between merges', async () => {
    server = await ServerProcess.start('queue', env());
    const remote = await GitRemote.create(server.url, REPO, path.join(root, 'work'));
    const prs = [1, 2, 3, 4, 5, 6, 7, 8];
    for (const n of prs) await remote.openPr(server.url, n);
    await post200(server.url, '/v1/createQueue', QUEUE);
    await post200(server.url, '/v1/updateQueue', {
      ...QUEUE,
      directMergeMode: 'off',
      requiredStatuses: ['ci'],
    });
    const kills: string[] = [];
    const db0 = db.database.db;

    // 1. Right after a submit was answered: the runner has the new work in its outbox, or is on it.
    await submit(1);
    await submit(2);
    await waitFor('the runner to take the queue', async () => (await readQueue(db0, REPO)).leaseOwner, {
      timeoutMs: 10_000,
    });
    await submit(3);
    const pending = (await readQueue(db0, REPO)).pendingActions.map((a) => a.type);
    const resumed1 = await crashAndRestart();
    kills.push(`after submit 3 with [${pending.join(', ')}] pending (resumed after ${resumed1} ms)`);

    // 2. While test branches are being built: the runner holds the lease and create_test_run is pending.
    for (const n of [4, 5, 6, 7, 8]) await submit(n);
    const building = await waitFor(
      'test branches being built',
      async () => {
        const q = await readQueue(db0, REPO);
        const runs = Object.values(q.runs);
        const built = runs.filter((r) => r.status === 'in_progress').length;
        return (
          q.pendingActions.some((a) => a.type === 'create_test_run') &&
          built > 0 && { built, runs: runs.length }
        );
      },
      { timeoutMs: 15_000, intervalMs: 2 },
    );
    const resumed2 = await crashAndRestart();
    kills.push(`mid-build, ${building.built} of ${building.runs} runs built (resumed after ${resumed2} ms)`);

    // CI reports success for every test branch it sees, through whatever server is up.
    ci = new FakeCi(remote);
    ci.start(() => (server?.running ? server.url : undefined));

    // 3. Between merges: a random number of PRs on main, the others not yet.
    const atLeast = randomInt(1, 5);
    const merged = await waitFor(
      `${atLeast} PRs merged but not all`,
      () => {
        const count = prs.filter((n) => squashCount(remote, n) > 0).length;
        return count >= atLeast && count < prs.length && count;
      },
      { timeoutMs: 30_000, intervalMs: 2 },
    );
    const merging = (await readQueue(db0, REPO)).merging;
    const resumed3 = await crashAndRestart();
    kills.push(
      `between merges (waited for ${atLeast}), ${merged} merged, ${merging === null ? 'none' : `#${merging.prNumber}`} merging (resumed after ${resumed3} ms)`,
    );

    await expectAllMergedOnce(remote, prs);
    const retried = await retriedActions(db0, (await readQueue(db0, REPO)).id);
    console.log(
      `queue kills: ${kills.join('; ')}; ${ci.sent} CI statuses; ${retried.length} actions retried`,
    );
  });

  // The narrowest window of a merge: the runner moved the target branch in git, then died before its
  // database transaction recorded merge_succeeded. The outbox still holds merge_pr, so the restarted
  // runner carries it out again; it must recognise the merge instead of squashing the PR a second time.
  it.each([
    { variant: 'the ref moved', markMerged: false },
    { variant: 'the ref moved and the forge marked the PR merged', markMerged: true },
  ])('a merge repeated after a crash once $variant lands once', async ({ variant, markMerged }) => {
    server = await ServerProcess.start('queue', env());
    const remote = await GitRemote.create(server.url, REPO, path.join(root, 'work'));
    await remote.openPr(server.url, 1);
    await remote.openPr(server.url, 2);
    await post200(server.url, '/v1/createQueue', QUEUE);
    await post200(server.url, '/v1/updateQueue', {
      ...QUEUE,
      directMergeMode: 'off',
      requiredStatuses: ['ci'],
    });
    await submit(1);
    await submit(2);
    await waitFor(
      'both test branches built',
      async () => {
        const runs = Object.values((await readQueue(db.database.db, REPO)).runs);
        return runs.length === 2 && runs.every((r) => r.status === 'in_progress');
      },
      { timeoutMs: 15_000 },
    );

    // CI passes while the runner is off (an API-only server), so merge_pr waits in the outbox. (SIGTERM
    // here only to skip the lease wait: the crash this test is about is the one simulated below.)
    await server.stop();
    server = await ServerProcess.start('api-only', env('0'));
    ci = new FakeCi(remote);
    expect(await ci.pass(() => server?.url)).toBe(2);
    const before = await readQueue(db.database.db, REPO);
    expect(before.merging).toMatchObject({ prNumber: 1 });
    expect(before.pendingActions.map((a) => a.type)).toContain('merge_pr');
    await server.stop();

    // What the dead runner had done: QueueRunner#merge → GitRepositoryForge.mergePullRequest, whose git step
    // moved main (and, in the second variant, whose PR row update committed too), and nothing after.
    const actions = await db.database.db
      .selectFrom('queue_actions')
      .select('action')
      .where('queue_id', '=', before.id)
      .where('done_at', 'is', null)
      .orderBy('id')
      .execute();
    const merge = actions.map((a) => JSON.parse(a.action)).find((a) => a.type === 'merge_pr');
    const repoRow = await db.database.db
      .selectFrom('repositories')
      .select('id')
      .where('name', '=', REPO.name)
      .executeTakeFirstOrThrow();
    // GitForge.mergePullRequest on the repository the server answered with (whatever its folder layout).
    const landed = await mergePullRequest(
      { gitDir: remote.bare, identity: DEFAULT_IDENTITY, timeoutMs: DEFAULT_TIMEOUT_MS },
      {
        targetBranch: 'main',
        prNumber: merge.prNumber,
        prTitle: prTitle(merge.prNumber),
        headSha: merge.expectedHeadSha,
        method: merge.method,
      },
    );
    expect(landed.ok).toBe(true);
    if (markMerged)
      await setPullRequestState(db.database.db, repoRow.id, merge.prNumber, 'merged', Date.now());

    server = await ServerProcess.start('queue', env());
    ci.start(() => (server?.running ? server.url : undefined));
    await expectAllMergedOnce(remote, [1, 2]);
    const pr1 = await post200(server.url, '/v1/getSubmittedPullRequest', { ...QUEUE, pr: { number: 1 } });
    expect(pr1.json.stateReason, 'merged, not cancelled on the way').toBe('merged into main with squash');
    console.log(`after a crash once ${variant}: PR 1 ${pr1.json.state}: ${pr1.json.stateReason}`);
  });
});
