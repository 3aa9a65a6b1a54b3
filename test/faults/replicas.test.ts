import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBootstrapToken } from '../../src/app/tokens.ts';
import { openDatabase } from '../../src/db/database.ts';
import { LEASE_MS } from '../../src/runner/queue-runner.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../support/database.ts';
import { junitXml, multipart } from '../support/upload.ts';
import { ORG, post, post200, ServerProcess, serverEnv, TOKEN, waitFor } from './support/cluster.ts';
import { FakeCi, GitRemote, squashSubject } from './support/git-remote.ts';
import { awaitTakeover, readQueue, retriedActions } from './support/queue-state.ts';

/**
 * Three server processes on one PostgreSQL database and one git root, as behind a load balancer:
 * requests spread across them see one state, one runner at a time drives a queue (its lease), and when
 * the replica holding the lease is SIGKILLed in the middle of merging, a survivor takes over once the
 * lease expires, and nothing is lost or merged twice. SQLite is one process's file: skipped there.
 */

const REPO = { host: 'git.example', owner: ORG, name: 'app' };
const QUEUE = { repo: REPO, targetBranch: 'main' };
const PRS = [1, 2, 3, 4, 5, 6];
/** Beyond LEASE_MS: a few runner passes (MAINLINE_QUEUE_POLL_MS=100). */
const TAKEOVER_SLACK_MS = 5_000;

describe.skipIf(!onPostgres)('replicas on PostgreSQL (needs DATABASE_URL; skipped on SQLite)', () => {
  let db: TestDatabase;
  let root: string;
  const replicas: ServerProcess[] = [];
  let ci: FakeCi | undefined;
  let sampler: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-faults-replicas-'));
  });
  afterAll(async () => {
    clearInterval(sampler);
    await ci?.stop();
    for (const r of replicas) await r.kill();
    await db?.cleanup();
    if (root !== undefined) fs.rmSync(root, { recursive: true, force: true });
  });

  const env = () =>
    serverEnv({ ...db.env, MAINLINE_GIT_ROOT: path.join(root, 'git'), MAINLINE_QUEUE_POLL_MS: '100' });
  let turn = 0;
  /** The next live replica, round robin, as a load balancer would pick. */
  const anyUrl = () => {
    const live = replicas.filter((r) => r.running);
    return live.length === 0 ? undefined : live[turn++ % live.length]!.url;
  };

  // What two replicas do at start with the same MAINLINE_BOOTSTRAP_* on a new database, at the same moment.
  it('two replicas creating the bootstrap token at once both start', async () => {
    const fresh = await createTestDatabase();
    const second = openDatabase({ databaseUrl: fresh.env['DATABASE_URL'], dataDir: '', poolSize: 2 });
    try {
      await Promise.all([fresh.database.ping(), second.ping()]);
      const input = { orgSlug: ORG, token: TOKEN, now: Date.now() };
      const outcomes = await Promise.allSettled([
        ensureBootstrapToken(fresh.database.db, input),
        ensureBootstrapToken(second.db, input),
      ]);
      expect(
        outcomes.map((o) => (o.status === 'fulfilled' ? o.value.kind : String(o.reason))).sort(),
      ).toEqual(['created', 'present']);
    } finally {
      await second.close();
      await fresh.cleanup();
    }
  });

  // The first deployment: every replica starts at once on an empty database, with the same settings.
  // Migrations wait for one another (a lock); the bootstrap token must be created once, not fail the losers.
  it('replicas started together on a new database all come up, with one bootstrap token', async () => {
    for (let round = 0; round < 3; round++) {
      const fresh = await createTestDatabase({ migrate: false });
      const started: ServerProcess[] = [];
      try {
        const starts = await Promise.allSettled(
          ['X', 'Y', 'Z'].map((name) =>
            ServerProcess.start(name, serverEnv(fresh.env)).then((server) => {
              started.push(server);
              return server;
            }),
          ),
        );
        const failed = starts.flatMap((s) =>
          s.status === 'rejected' ? [String(s.reason).split('\n')[0]] : [],
        );
        expect(failed, `round ${round}: every replica starts`).toEqual([]);
        for (const server of started) {
          expect(
            (await post(server.url, '/v1/repositories/list', { page_query: { page_size: 1 } })).status,
          ).toBe(200);
        }
        const tokens = await fresh.database.db.selectFrom('api_tokens').select('id').execute();
        expect(tokens).toHaveLength(1);
      } finally {
        for (const server of started) await server.kill();
        await fresh.cleanup();
      }
    }
  });

  it('share one state, one runner per queue, and a survivor takes over a killed lease holder mid-merge', async () => {
    const q = db.database.db;
    // A starts alone, so the runner that first takes the queue's lease can only be A's.
    const a = await ServerProcess.start('A', env());
    replicas.push(a);
    const remote = await GitRemote.create(a.url, REPO, path.join(root, 'work'));
    for (const n of PRS) await remote.openPr(a.url, n);
    await post200(a.url, '/v1/createQueue', QUEUE);
    await post200(a.url, '/v1/updateQueue', { ...QUEUE, directMergeMode: 'off', requiredStatuses: ['ci'] });
    for (const n of PRS) await post200(a.url, '/v1/submitPullRequest', { ...QUEUE, pr: { number: n } });
    const ownerA = await waitFor('A to take the lease', async () => (await readQueue(q, REPO)).leaseOwner, {
      timeoutMs: 10_000,
    });

    // B and C start together on the already migrated database.
    const [b, c] = await Promise.all([ServerProcess.start('B', env()), ServerProcess.start('C', env())]);
    replicas.push(b, c);
    const owners: string[] = [ownerA];
    sampler = setInterval(() => {
      readQueue(q, REPO)
        .then((row) => {
          if (row.leaseOwner !== null && row.leaseOwner !== owners.at(-1)) owners.push(row.leaseOwner);
        })
        .catch(() => undefined);
    }, 20);

    // One state through every replica: an upload through A is a duplicate through B and C at once...
    const meta = {
      repo: { host: 'github.com', owner: ORG, name: 'web' },
      org_url_slug: ORG,
      branch: 'main',
      commit_sha: 'c0ffee0000000000000000000000000000000001',
      upload_key: 'replicas-upload-1',
    };
    const body = multipart(meta, [
      { name: 'r.xml', content: junitXml([{ name: 'one' }, { name: 'two', fail: 'boom' }]) },
    ]);
    const uploadTo = (url: string) =>
      fetch(`${url}/v1/test-results/upload`, {
        method: 'POST',
        headers: { 'x-api-token': TOKEN, 'content-type': body.contentType },
        body: body.payload,
      }).then(async (res) => ({ status: res.status, json: (await res.json()) as { upload_id: string } }));
    const first = await uploadTo(a.url);
    expect(first).toMatchObject({ status: 200, json: { duplicate: false } });
    for (const r of [b, c]) {
      expect(await uploadTo(r.url)).toMatchObject({
        status: 200,
        json: { duplicate: true, upload_id: first.json.upload_id },
      });
    }
    // ...and a queue created through B is there through A and C, and cannot be created twice.
    const other = { repo: { host: 'git.example', owner: ORG, name: 'other' }, targetBranch: 'main' };
    await post200(b.url, '/v1/createQueue', other);
    for (const r of [a, c]) expect((await post200(r.url, '/v1/getQueue', other)).json.branch).toBe('main');
    expect((await post(c.url, '/v1/createQueue', other)).status).toBe(409);

    // CI reports success on every test branch, through the replicas in turn.
    ci = new FakeCi(remote);
    ci.start(anyUrl);

    // Kill the lease holder in the middle of merging: a PR on main, another one's merge under way.
    const merged = (n: number) => remote.history().includes(squashSubject(n));
    const atKill = await waitFor(
      'a merge under way after the first',
      async () => {
        const row = await readQueue(q, REPO);
        return row.merging !== null && PRS.some(merged) && row;
      },
      { timeoutMs: 30_000, intervalMs: 2 },
    );
    await a.kill();
    const killedAt = Date.now();
    expect(atKill.leaseOwner, 'A held the lease up to its death').toBe(ownerA);
    expect(owners, 'while A lived, no other runner drove the queue').toEqual([ownerA]);
    const mergedAtKill = PRS.filter(merged);

    const takeover = await awaitTakeover(q, REPO, ownerA, killedAt, LEASE_MS + 20_000);
    expect(takeover.afterMs, 'a survivor takes the queue within the lease time').toBeLessThanOrEqual(
      LEASE_MS + TAKEOVER_SLACK_MS,
    );

    await waitFor(
      'every PR merged, read through the survivors',
      async () => {
        for (const n of PRS) {
          const res = await post200(anyUrl()!, '/v1/getSubmittedPullRequest', {
            ...QUEUE,
            pr: { number: n },
          });
          if (res.json.state !== 'merged') return false;
        }
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    await waitFor(
      'the outbox to drain',
      async () =>
        (await readQueue(q, REPO)).pendingActions.length === 0 && remote.testBranches().length === 0,
      { timeoutMs: 20_000 },
    );

    const history = remote.history();
    expect(history.at(-1)).toBe('Initial commit');
    expect([...history.slice(0, -1)].sort(), 'each PR is on main exactly once').toEqual(
      PRS.map(squashSubject).sort(),
    );
    for (const r of [b, c]) {
      expect((await post200(r.url, '/v1/getQueue', QUEUE)).json).toMatchObject({
        state: 'running',
        enqueuedPullRequests: [],
      });
    }
    clearInterval(sampler);
    expect(owners, 'one survivor took over, and kept the queue').toEqual([ownerA, takeover.owner]);
    const retried = await retriedActions(q, (await readQueue(q, REPO)).id);
    console.log(
      `replicas: killed A with ${mergedAtKill.length} merged and #${atKill.merging?.prNumber} merging; ` +
        `taken over after ${takeover.afterMs} ms; ${retried.length} actions retried`,
    );
  });
});
