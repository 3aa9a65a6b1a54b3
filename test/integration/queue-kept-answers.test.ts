// getQueue keeps its serialized answer per queue (src/app/queue/kept-answers.ts) by the state's version,
// the row's label columns and the flake protection shown, and a GitLab branch's settings in the forge
// settings memo by the head the queue's state names (src/app/queue/forge-settings-cache.ts). What a user
// must never notice: every change, through the API, the engine or a column another replica wrote, shows
// on the next read, and a push of .mainline.yaml shows at once.
import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { GitLabScenario, GL_PATH, GL_REPO } from '../support/gitlab-sim/index.ts';

interface QueueAnswer {
  state: string;
  concurrency: number;
  flakeProtection: string;
  enqueueingLabel: string;
  enqueuedPullRequests: { prNumber: number; state: string }[];
}

describe('getQueue answers kept by version and settings', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('shows every change on the next read: submissions, engine steps, settings and columns', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    const g = s;
    const read = async () => {
      const res = await g.post('/v1/getQueue', { repo: REPO, targetBranch: 'main' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      return { body: res.body, answer: res.json() as QueueAnswer };
    };
    const update = async (body: object) => {
      const res = await g.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', ...body });
      expect(res.statusCode, res.body).toBe(200);
    };
    const first = await read();
    expect(first.answer.enqueuedPullRequests).toEqual([]);
    expect((await read()).body).toBe(first.body);

    await g.openPr(1, { 'one.txt': '1\n' }, 'One');
    await g.openPr(2, { 'two.txt': '2\n' }, 'Two');
    await g.submit(1);
    expect((await read()).answer.enqueuedPullRequests.map((p) => p.prNumber)).toEqual([1]);
    await g.submit(2);
    expect((await read()).answer.enqueuedPullRequests.map((p) => p.prNumber)).toEqual([1, 2]);
    // The runner's steps (CI passed, both merged) take them out of the queue.
    await g.settle();
    await g.ci('success');
    await g.settle();
    expect((await read()).answer.enqueuedPullRequests).toEqual([]);

    await update({ concurrency: 3 });
    expect((await read()).answer.concurrency).toBe(3);
    await update({ state: 'paused' });
    expect((await read()).answer.state).toBe('paused');

    // Columns written without a new state version, as another replica's updateQueue could leave them.
    const db = g.t.db.database.db;
    const held = (await read()).body;
    expect((await read()).body).toBe(held);
    await db.updateTable('merge_queues').set({ enqueueing_label: 'ready-to-merge' }).execute();
    expect((await read()).answer.enqueueingLabel).toBe('ready-to-merge');
    await db.updateTable('merge_queues').set({ flake_protection: 'retry_flaky' }).execute();
    expect((await read()).answer.flakeProtection).toBe('retry_flaky');
  });

  it('keeps nothing with MAINLINE_KEPT_QUEUES=0 and answers the same bytes', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' }, undefined, { MAINLINE_KEPT_QUEUES: '0' });
    await s.openPr(1, { 'one.txt': '1\n' }, 'One');
    await s.submit(1);
    const a = await s.post('/v1/getQueue', { repo: REPO, targetBranch: 'main' });
    const b = await s.post('/v1/getQueue', { repo: REPO, targetBranch: 'main' });
    expect(a.statusCode).toBe(200);
    expect(b.body).toBe(a.body);
    expect(a.json().enqueuedPullRequests).toMatchObject([{ prNumber: 1, prTitle: 'One' }]);
  });
});

describe('getQueue on GitLab remembers what the branch says', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const yaml = (mode: string) => `merge:\n  required_statuses: [ci]\n  flake_protection: ${mode}\n`;

  it('a repeated read asks GitLab nothing; a push of .mainline.yaml to the branch shows at once', async () => {
    s = await GitLabScenario.create(
      {},
      { files: { 'README.md': 'hello\n', '.mainline.yaml': yaml('retry_flaky') } },
    );
    const sc = s;
    const flake = async () => {
      const res = await sc.post('/v1/getQueue', { repo: GL_REPO, targetBranch: 'main' });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json() as QueueAnswer).flakeProtection;
    };
    expect(await flake()).toBe('retry_flaky');
    const calls = sc.sim.requests.length;
    expect(await flake()).toBe('retry_flaky');
    expect(sc.sim.requests.length).toBe(calls);
    // Another branch's push changes nothing here.
    await sc.sim.commit(GL_PATH, 'feature', { 'feature.txt': 'new\n' });
    await sc.sim.flush();
    const afterOther = sc.sim.requests.length;
    expect(await flake()).toBe('retry_flaky');
    expect(sc.sim.requests.length).toBe(afterOther);

    // The push webhook moves the queue's target head: the next read asks GitLab again.
    await sc.sim.commit(GL_PATH, 'main', { '.mainline.yaml': yaml('ignore_quarantined') });
    await sc.sim.flush();
    expect(await flake()).toBe('ignore_quarantined');

    // A change no webhook told of (here: pointed nowhere) shows after the TTL (60 s by default).
    sc.sim.setWebhookUrl('http://127.0.0.1:9/nowhere');
    await sc.sim.commit(GL_PATH, 'main', { '.mainline.yaml': yaml('off') });
    sc.clock += 59_000;
    expect(await flake()).toBe('ignore_quarantined');
    sc.clock += 2_000;
    expect(await flake()).toBe('off');
  });
});
