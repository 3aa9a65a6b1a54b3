import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabClient } from '../../src/forge/gitlab/client.ts';
import { GitLabForge } from '../../src/forge/gitlab/forge.ts';
import { GitLabScenario, GL_PATH, GL_TOKEN } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 240_000 });

/**
 * Fast-forward and semi-linear GitLab projects: the queue rebases what it tests (each merge request
 * replayed on the target and the ones ahead of it) and, at its turn, pushes exactly the tested
 * rebased head to the merge request's source branch (with a lease on the head it saw) and merges
 * that SHA. Git goes over the simulator's HTTP, so those pushes send GitLab's merge request events.
 */
describe('GitLab fast-forward and semi-linear projects: the queue rebases', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  /**
   * Three merge requests branched from main, which then moves on: none is rebased on main nor on the
   * ones ahead of it. Their heads' own CI passed; they are submitted and the queue runs.
   */
  async function threeUnrebased(scenario: GitLabScenario): Promise<number[]> {
    const iids: number[] = [];
    for (const n of [1, 2, 3]) {
      iids.push(await scenario.openMr(`f${n}`, { [`${n}.txt`]: `${n}\n` }, `Feature ${n}`));
    }
    await scenario.sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    await scenario.sim.flush();
    for (const n of iids) await scenario.headGreen(n);
    for (const n of iids) await scenario.submit(n);
    await scenario.settle();
    return iids;
  }

  /** The SHA each merge request's test branch was at (the last of its branches). */
  async function testedShas(scenario: GitLabScenario, iids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const n of iids) {
      const branches = await scenario.testBranches(n);
      expect(branches.length, `test branches of !${n}`).toBeGreaterThan(0);
      out.set(n, branches.at(-1)?.sha ?? '');
    }
    return out;
  }

  it('fast-forward: three unrebased merge requests at concurrency 3 are tested together and merge in order, main linear and each merged head exactly the tested commit', async () => {
    s = await GitLabScenario.create(
      { directMergeMode: 'off', concurrency: 3, mergeMethod: 'merge_commit' },
      { mergeMethod: 'ff', httpRemote: true },
    );
    const iids = await threeUnrebased(s);
    const start = await s.sim.branchHead(GL_PATH, 'main');
    // All three are under test at once, each on the ones ahead of it.
    for (const n of iids) expect((await s.pr(n)).state, `!${n}`).toBe('testing');
    const tested = await testedShas(s, iids);
    const repo = s.sim.project(GL_PATH).repo;
    expect(await repo.isAncestor(tested.get(1) ?? '', tested.get(2) ?? '')).toBe(true);
    expect(await repo.isAncestor(tested.get(2) ?? '', tested.get(3) ?? '')).toBe(true);
    for (const n of iids) await s.ciOnTestBranch(n, 'success');
    await s.settle();
    for (const n of iids) expect((await s.pr(n)).state, `!${n}`).toBe('merged');
    // Linear history, in queue order, main exactly at the last tested commit.
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(tested.get(3));
    expect(await repo.out(['rev-list', '--merges', `${start}..refs/heads/main`])).toBe('');
    expect(await s.sim.log(GL_PATH, 'main')).toEqual([
      'Feature 3',
      'Feature 2',
      'Feature 1',
      'Other',
      'Initial commit',
    ]);
    for (const n of iids) {
      const mr = await s.sim.mergeRequest(GL_PATH, n);
      expect(mr['state'], `!${n}`).toBe('merged');
      expect(mr['sha'], `!${n} merged the tested commit`).toBe(tested.get(n));
    }
  });

  it('semi-linear history: three unrebased merge requests at concurrency 3 merge in order, each a merge commit of the tested tree on a head rebased on main', async () => {
    s = await GitLabScenario.create(
      { directMergeMode: 'off', concurrency: 3, mergeMethod: 'merge_commit' },
      { mergeMethod: 'rebase_merge', httpRemote: true },
    );
    const iids = await threeUnrebased(s);
    const start = (await s.sim.branchHead(GL_PATH, 'main')) ?? '';
    for (const n of iids) expect((await s.pr(n)).state, `!${n}`).toBe('testing');
    const tested = await testedShas(s, iids);
    for (const n of iids) await s.ciOnTestBranch(n, 'success');
    await s.settle();
    for (const n of iids) expect((await s.pr(n)).state, `!${n}`).toBe('merged');
    const repo = s.sim.project(GL_PATH).repo;
    // First-parent history: one merge commit per merge request, in order, each of a head rebased on
    // the main before it (semi-linear), with exactly the tree that was tested.
    let before = start;
    const mains = (
      await repo.out(['rev-list', '--first-parent', '--reverse', `${start}..refs/heads/main`])
    ).split('\n');
    expect(mains).toHaveLength(3);
    for (const [i, n] of iids.entries()) {
      const merge = mains[i] ?? '';
      const mr = await s.sim.mergeRequest(GL_PATH, n);
      expect(mr['merge_commit_sha'], `!${n}`).toBe(merge);
      expect(await repo.parents(merge)).toEqual([before, mr['sha']]);
      expect(await repo.isAncestor(before, mr['sha'] as string), `!${n} rebased on main`).toBe(true);
      expect(await repo.tree(merge), `!${n} landed the tested tree`).toBe(
        await repo.tree(tested.get(n) ?? ''),
      );
      before = merge;
    }
  });

  it('a rebase conflict fails only that merge request, with a reason naming the file; the others merge', async () => {
    s = await GitLabScenario.create(
      { directMergeMode: 'off', concurrency: 3, mergeMethod: 'merge_commit' },
      { mergeMethod: 'ff', httpRemote: true },
    );
    const one = await s.openMr('one', { 'shared.txt': 'one\n' }, 'One');
    const two = await s.openMr('two', { 'shared.txt': 'two\n' }, 'Two');
    const three = await s.openMr('three', { '3.txt': '3\n' }, 'Three');
    await s.sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    for (const n of [one, two, three]) await s.headGreen(n);
    for (const n of [one, two, three]) await s.submit(n);
    await s.settle();
    for (let round = 0; round < 3; round++) {
      for (const n of [one, three]) {
        if ((await s.pr(n)).state !== 'testing') continue;
        const branches = await s.testBranches(n);
        const sha = branches.at(-1)?.sha ?? '';
        await s.sim.setStatus(GL_PATH, sha, 'ci', 'success');
      }
      await s.sim.flush();
      await s.settle();
    }
    const failed = await s.pr(two);
    expect(failed.state).toBe('failed');
    expect(failed.stateReason).toMatch(/!2 does not rebase on [0-9a-f]{12}: conflict in shared\.txt/);
    expect((await s.pr(one)).state).toBe('merged');
    expect((await s.pr(three)).state).toBe('merged');
    expect(await s.sim.log(GL_PATH, 'main')).toEqual(['Three', 'One', 'Other', 'Initial commit']);
    // The conflicting merge request's branch was left as its author pushed it.
    expect((await s.sim.mergeRequest(GL_PATH, two))['state']).toBe('opened');
  });

  it('a push to the source branch while queued: the queue takes it out and never merges the stale test', async () => {
    s = await GitLabScenario.create(
      { directMergeMode: 'off', concurrency: 2, mergeMethod: 'merge_commit' },
      { mergeMethod: 'ff', httpRemote: true },
    );
    const one = await s.openMr('one', { '1.txt': '1\n' }, 'One');
    const two = await s.openMr('two', { '2.txt': '2\n' }, 'Two');
    await s.sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    for (const n of [one, two]) await s.headGreen(n);
    for (const n of [one, two]) await s.submit(n);
    await s.settle();
    const tested = await testedShas(s, [one, two]);
    // The author pushes to !2 and the event is lost: the runner's comparison with GitLab finds it.
    const url = `http://127.0.0.1:${(s.t.app.server.address() as { port: number }).port}/webhooks/gitlab`;
    s.sim.setWebhookUrl(undefined);
    const pushed = await s.sim.commit(GL_PATH, 'two', { '2.txt': 'two, again\n' }, { message: 'Two again' });
    s.sim.setWebhookUrl(url);
    for (const n of [one, two]) await s.ciOnTestBranch(n, 'success');
    await s.settle();
    expect((await s.pr(one)).state).toBe('merged');
    expect((await s.pr(two)).state).not.toBe('merged');
    expect((await s.sim.mergeRequest(GL_PATH, two))['state']).toBe('opened');
    expect(await s.sim.branchHead(GL_PATH, 'two')).toBe(pushed);
    expect(await s.sim.branchHead(GL_PATH, 'main')).toBe(tested.get(one));
  });

  it('the merge pushes the rebased head only with a lease on the head the queue saw: a push that lands after GitLab was read is kept and nothing merges', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { mergeMethod: 'ff' });
    const sim = s.sim;
    const iid = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    const head = (await sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    const main = (await sim.branchHead(GL_PATH, 'main')) ?? '';
    let race: (() => Promise<unknown>) | undefined;
    // A client through which the author's push lands right after the forge read the merge request.
    class Racing extends GitLabClient {
      override async request<T>(
        method: 'GET' | 'POST' | 'PUT' | 'DELETE',
        path: string,
        body?: object,
        options?: { retry?: boolean; raw?: boolean },
      ): Promise<{ data: T; headers: Headers }> {
        const res = await super.request<T>(method, path, body, options);
        if (method === 'GET' && path.endsWith(`/merge_requests/${iid}`) && race !== undefined) {
          const step = race;
          race = undefined;
          await step();
        }
        return res;
      }
    }
    await withForge(new Racing({ baseUrl: sim.url, token: GL_TOKEN, retryBaseMs: 1 }), async (f) => {
      const built = await f.build('lease', main, iid, head);
      expect(built.ok).toBe(true);
      const rebased = built.ok ? built.sha : '';
      expect(rebased).not.toBe(head);
      let theirs = '';
      race = async () => {
        theirs = await sim.commit(GL_PATH, 'feature', { 'f.txt': 'f, later\n' }, { message: 'Later' });
      };
      const merged = await f.merge(iid, head, main);
      expect(theirs).not.toBe('');
      expect(merged).toEqual({
        ok: false,
        reason: expect.stringMatching(
          /source branch feature of !1 moved from [0-9a-f]{40} while it was queued; not merged/,
        ),
      });
      expect(await sim.branchHead(GL_PATH, 'feature')).toBe(theirs);
      expect(await sim.branchHead(GL_PATH, 'main')).toBe(main);
      expect((await sim.mergeRequest(GL_PATH, iid))['state']).toBe('opened');
      // Without the race the rebased head that was tested is pushed and merged (fast-forward).
      const again = await f.build('lease2', main, iid, theirs);
      const done = await f.merge(iid, theirs, main);
      expect(done).toEqual({ ok: true, newTargetSha: again.ok ? again.sha : 'not built' });
      expect(await sim.branchHead(GL_PATH, 'main')).toBe(again.ok ? again.sha : '');
    });
  });

  it('never pushes or merges a rebased head the queue did not test: a merge onto a target no test branch was built on is refused', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { mergeMethod: 'ff' });
    const sim = s.sim;
    const iid = await s.openMr('feature', { 'f.txt': 'f\n' }, 'Feature');
    await sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    const head = (await sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    const tested = (await sim.branchHead(GL_PATH, 'main')) ?? '';
    await withForge(new GitLabClient({ baseUrl: sim.url, token: GL_TOKEN, retryBaseMs: 1 }), async (f) => {
      const built = await f.build('tested', tested, iid, head);
      expect(built.ok).toBe(true);
      // main moves on after the test; a merge asked onto the new tip would push a rebased head that no
      // test branch ever held.
      const moved = await sim.commit(GL_PATH, 'main', { 'later.txt': 'l\n' }, { message: 'Later' });
      const merged = await f.merge(iid, head, moved);
      expect(merged).toEqual({
        ok: false,
        reason: expect.stringMatching(
          /rebased on [0-9a-f]{12} is [0-9a-f]{40}, which the queue did not test; not merged/,
        ),
      });
      expect(await sim.branchHead(GL_PATH, 'feature')).toBe(head);
      expect(await sim.branchHead(GL_PATH, 'main')).toBe(moved);
      expect((await sim.mergeRequest(GL_PATH, iid))['state']).toBe('opened');
    });
  });

  it('a merge request from a fork that needs a rebase fails with a reason saying Mainline cannot push to it', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' }, { mergeMethod: 'ff' });
    await s.sim.commit(GL_PATH, 'fork-branch', { 'f.txt': 'f\n' }, { message: 'From a fork' });
    const iid = await s.sim.openMergeRequest(GL_PATH, {
      source: 'fork-branch',
      title: 'From a fork',
      fromFork: true,
    });
    await s.sim.commit(GL_PATH, 'main', { 'other.txt': 'o\n' }, { message: 'Other' });
    await s.sim.flush();
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    const pr = await s.pr(iid);
    expect(pr.state).toBe('failed');
    expect(pr.stateReason).toMatch(/comes from a fork whose branch Mainline cannot push to/);
  });
});

/**
 * A GitLab forge on its own mirror folder (removed after), driven directly rather than by the queue:
 * `build` makes the test branch mainline-merge/pr-<iid>/<name> of one merge request on a base, `merge`
 * asks to merge the `Feature` merge request at a head onto an expected target tip.
 */
async function withForge(
  client: GitLabClient,
  use: (f: {
    build: (
      name: string,
      baseSha: string,
      iid: number,
      sha: string,
    ) => ReturnType<GitLabForge['buildTestBranch']>;
    merge: (
      iid: number,
      headSha: string,
      expectedTargetSha: string,
    ) => ReturnType<GitLabForge['mergePullRequest']>;
  }) => Promise<void>,
): Promise<void> {
  const mirrorRoot = await mkdtemp(join(tmpdir(), 'gl-rebase-forge-'));
  try {
    const forge = new GitLabForge({ client, mirrorRoot });
    const repo = { id: 'r1', host: 'gitlab.com', owner: 'acme', name: 'widgets' };
    await use({
      build: (name, baseSha, iid, sha) =>
        forge.buildTestBranch(repo, {
          testBranch: `mainline-merge/pr-${iid}/${name}`,
          baseSha,
          prHeads: [{ number: iid, sha }],
        }),
      merge: (iid, headSha, expectedTargetSha) =>
        forge.mergePullRequest(repo, {
          targetBranch: 'main',
          prNumber: iid,
          prTitle: 'Feature',
          headSha,
          method: 'merge_commit',
          expectedTargetSha,
        }),
    });
  } finally {
    await rm(mirrorRoot, { recursive: true, force: true });
  }
}
