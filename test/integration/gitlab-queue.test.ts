import { afterEach, describe, expect, it, vi } from 'vitest';
import { GITLAB_STATUS_NAME, NOTE_MARKER } from '../../src/forge/gitlab/report.ts';
import { GitLabScenario, GL_PATH } from '../support/gitlab-sim/index.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 180_000 });

describe('the merge queue on GitLab (simulated REST API and webhooks, real git behind it)', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('/mainline merge from a Developer → test branch pushed → CI passes → merged through the API with the tested SHA; note and status kept current', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    s.sim.addMember(GL_PATH, 'ada', 30);
    const iid = await s.openMr('feature', { 'feature.txt': 'new\n' }, 'Add feature');
    const head = (await s.sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    await s.sim.addNote(GL_PATH, iid, 'ada', 'Looks good.\n/mainline merge');
    await s.sim.flush();
    await s.settle();
    const waiting = await s.pr(iid);
    expect(waiting.state).toBe('not_ready');
    expect(await s.testBranches(iid)).toEqual([]);

    await s.headGreen(iid);
    await s.settle();
    expect((await s.pr(iid)).state).toBe('testing');
    const run = await s.testBranch(iid);
    expect(await s.sim.project(GL_PATH).repo.showFile(run.sha, 'feature.txt')).toBe('new\n');
    expectQueueNoteAndStatus(s, iid, head, /Testing/, 'running');

    await s.ciOnTestBranch(iid, 'success');
    await s.settle();
    const mr = await s.sim.mergeRequest(GL_PATH, iid);
    expect(mr['state']).toBe('merged');
    expect(await s.sim.project(GL_PATH).repo.showFile('refs/heads/main', 'feature.txt')).toBe('new\n');
    expect((await s.pr(iid)).state).toBe('merged');
    const merges = s.sim.requests.filter(
      (r) => r.method === 'PUT' && r.path.endsWith(`/merge_requests/${iid}/merge`),
    );
    expect(merges.map((r) => r.status)).toEqual([200]);
    expectQueueNoteAndStatus(s, iid, head, /Merged/, 'success');
    // The test branch is deleted once its run ended.
    expect(await s.testBranches(iid)).toEqual([]);
  });
});

describe('queue scenarios on GitLab', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('merges in submission order; a merge request whose tests fail is ejected and the one behind it merges without it', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off', concurrency: 1 });
    const one = await s.openMr('one', { '1.txt': '1\n' }, 'One');
    const two = await s.openMr('two', { '2.txt': '2\n' }, 'Two');
    const three = await s.openMr('three', { '3.txt': '3\n' }, 'Three');
    for (const n of [one, two, three]) await s.headGreen(n);
    for (const n of [one, two, three]) await s.submit(n);
    await s.settle();
    // One at a time: !1 is tested on main.
    expect(await s.testBranches(two)).toEqual([]);
    await s.ciOnTestBranch(one, 'success');
    await s.settle();
    expect((await s.pr(one)).state).toBe('merged');
    // !2 fails: ejected; !3 is tested without it and merges.
    await s.ciOnTestBranch(two, 'failed');
    await s.settle();
    expect((await s.pr(two)).state).toBe('failed');
    const run3 = await s.testBranch(three);
    expect(await s.sim.project(GL_PATH).repo.showFile(run3.sha, '2.txt')).toBeNull();
    await s.ciOnTestBranch(three, 'success');
    await s.settle();
    expect((await s.pr(three)).state).toBe('merged');
    expect((await s.sim.mergeRequest(GL_PATH, two))['state']).toBe('opened');
    const main = await s.sim.log(GL_PATH, 'main');
    // The queue's default method is squash: GitLab squashes, then merges (the project's merge method).
    expect(main.filter((m) => m.startsWith('Merge branch'))).toEqual([
      "Merge branch 'three' into 'main'",
      "Merge branch 'one' into 'main'",
    ]);
  });

  it('a merge request that conflicts with the one ahead fails with the conflict named; pause holds the queue until resumed', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off', concurrency: 2 });
    const one = await s.openMr('one', { 'shared.txt': 'one\n' }, 'One');
    const two = await s.openMr('two', { 'shared.txt': 'two\n' }, 'Two');
    for (const n of [one, two]) await s.headGreen(n);
    const paused = await s.post('/v1/updateQueue', {
      repo: { host: 'gitlab.com', owner: 'acme', name: 'widgets' },
      targetBranch: 'main',
      state: 'paused',
    });
    expect(paused.statusCode, paused.body).toBe(200);
    for (const n of [one, two]) await s.submit(n);
    await s.settle();
    // Paused: nothing is built.
    expect(await s.testBranches(one)).toEqual([]);
    const resumed = await s.post('/v1/updateQueue', {
      repo: { host: 'gitlab.com', owner: 'acme', name: 'widgets' },
      targetBranch: 'main',
      state: 'running',
    });
    expect(resumed.statusCode, resumed.body).toBe(200);
    await s.settle();
    // !2 cannot be merged on top of !1: it waits for !1's outcome, then fails on the conflict.
    expect((await s.pr(two)).state).toBe('pending_failure');
    await s.ciOnTestBranch(one, 'success');
    await s.settle();
    expect((await s.pr(one)).state).toBe('merged');
    const failed = await s.pr(two);
    expect(failed.state).toBe('failed');
    expect(JSON.stringify(failed)).toMatch(/conflict/i);
    expect((await s.sim.mergeRequest(GL_PATH, two))['state']).toBe('opened');
  });

  it('a head that changed after testing is not merged: GitLab refuses the tested SHA (409) and main keeps only what was tested', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    const iid = await s.openMr('feature', { 'f.txt': 'tested\n' }, 'Feature');
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    const run = await s.testBranch(iid);
    // The author pushes again and the webhook is lost: Mainline still believes the tested head.
    const url = `http://127.0.0.1:${(s.t.app.server.address() as { port: number }).port}/webhooks/gitlab`;
    s.sim.setWebhookUrl(undefined);
    await s.sim.commit(GL_PATH, 'feature', { 'f.txt': 'untested\n' });
    await s.sim.setStatus(GL_PATH, run.sha, 'ci', 'success');
    s.sim.setWebhookUrl(url);
    // CI's result arrives again (a later job event on the same commit).
    await s.sim.setStatus(GL_PATH, run.sha, 'ci', 'success');
    await s.sim.flush();
    await s.settle();
    expect((await s.sim.mergeRequest(GL_PATH, iid))['state']).toBe('opened');
    expect(await s.sim.project(GL_PATH).repo.showFile('refs/heads/main', 'f.txt')).toBeNull();
    expect((await s.pr(iid)).state).not.toBe('merged');
  });

  it('the forge refuses to merge a head other than the one given, and a target that moved since testing', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    const iid = await s.openMr('feature', { 'f.txt': 'a\n' }, 'Feature');
    const tested = (await s.sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    await s.sim.commit(GL_PATH, 'feature', { 'f.txt': 'b\n' });
    const repo = { id: 'x', host: 'gitlab.com', owner: 'acme', name: 'widgets' };
    const gitlab = s.forge.gitlab?.forge;
    if (gitlab === undefined) throw new Error('no GitLab forge');
    const moved = await gitlab.mergePullRequest(repo, {
      targetBranch: 'main',
      prNumber: iid,
      prTitle: 'Feature',
      headSha: tested,
      method: 'merge_commit',
    });
    expect(moved.ok).toBe(false);
    expect(s.sim.requests.filter((r) => r.method === 'PUT').map((r) => r.status)).toEqual([409]);
    const current = (await s.sim.mergeRequest(GL_PATH, iid))['sha'] as string;
    const mainTip = (await s.sim.branchHead(GL_PATH, 'main')) as string;
    const elsewhere = await gitlab.mergePullRequest(repo, {
      targetBranch: 'main',
      prNumber: iid,
      prTitle: 'Feature',
      headSha: current,
      method: 'squash',
      expectedTargetSha: tested,
    });
    expect(elsewhere).toMatchObject({ ok: false, targetMovedTo: mainTip });
    expect((await s.sim.mergeRequest(GL_PATH, iid))['state']).toBe('opened');
    const squashed = await gitlab.mergePullRequest(repo, {
      targetBranch: 'main',
      prNumber: iid,
      prTitle: 'Feature',
      headSha: current,
      method: 'squash',
      expectedTargetSha: mainTip,
    });
    expect(squashed.ok).toBe(true);
    expect(await s.sim.project(GL_PATH).repo.showFile('refs/heads/main', 'f.txt')).toBe('b\n');
    // Repeated after a lost answer: the merge that happened is reported, nothing is merged twice.
    const again = await gitlab.mergePullRequest(repo, {
      targetBranch: 'main',
      prNumber: iid,
      prTitle: 'Feature',
      headSha: current,
      method: 'squash',
      expectedTargetSha: mainTip,
    });
    expect(again).toEqual(squashed);
  });
});

/** The queue keeps one note on the merge request (edited in place) and its commit status on the head. */
function expectQueueNoteAndStatus(
  s: GitLabScenario,
  iid: number,
  head: string,
  note: RegExp,
  status: string,
): void {
  const notes = s.sim.notes(GL_PATH, iid).filter((n) => n.body.startsWith(NOTE_MARKER));
  expect(notes).toHaveLength(1);
  expect(notes[0]?.body).toMatch(note);
  const ours = s.sim.statuses(GL_PATH, head).filter((x) => x.name === GITLAB_STATUS_NAME);
  expect(ours.at(-1)?.status).toBe(status);
}
