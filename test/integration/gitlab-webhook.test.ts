import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabScenario, GL_PATH, GL_REPO, GL_SECRET } from '../support/gitlab-sim/index.ts';
import { forgeDeliveryRows } from '../support/reads.ts';

// Real git and HTTP on a shared machine: scenarios take a while.
vi.setConfig({ testTimeout: 180_000 });

const gitlabRows = async (s: GitLabScenario) =>
  (await forgeDeliveryRows(s.t)).filter((r) => r.id.startsWith('gitlab:'));

describe('GitLab webhooks (POST /webhooks/gitlab)', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a wrong or missing X-Gitlab-Token is a 401 that changes nothing; a repeated event UUID is acknowledged once; bad JSON is a 400', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    s.sim.addMember(GL_PATH, 'ada', 40);
    const iid = await s.openMr('feature', { 'f.txt': 'x\n' });
    await s.headGreen(iid);
    const before = (await gitlabRows(s)).length;
    await s.sim.addNote(GL_PATH, iid, 'ada', '/mainline merge');
    const note = s.sim.deliveries.filter((d) => d.event === 'Note Hook').at(-1);
    if (note === undefined) throw new Error('no note delivery');
    // The same note with a forged token: refused before anything is read or stored.
    const forged = await s.sim.redeliver({ ...note, uuid: 'forged-1' }, 'not-the-secret');
    expect(forged.status).toBe(401);
    expect(JSON.parse(forged.body).error.code).toBe('INVALID_SIGNATURE');
    const missing = await s.t.app.inject({
      method: 'POST',
      url: '/webhooks/gitlab',
      headers: {
        'content-type': 'application/json',
        'x-gitlab-event': 'Note Hook',
        'x-gitlab-event-uuid': 'u-2',
      },
      payload: JSON.stringify(note.payload),
    });
    expect(missing.statusCode).toBe(401);
    const notJson = await s.t.app.inject({
      method: 'POST',
      url: '/webhooks/gitlab',
      headers: {
        'content-type': 'application/json',
        'x-gitlab-token': GL_SECRET,
        'x-gitlab-event': 'Note Hook',
        'x-gitlab-event-uuid': 'u-3',
      },
      payload: '[1,2',
    });
    expect(notJson.statusCode).toBe(400);
    expect((await gitlabRows(s)).filter((r) => r.id === 'gitlab:forged-1' || r.id === 'gitlab:u-2')).toEqual(
      [],
    );

    await s.sim.flush();
    expect(note.status).toBe(202);
    expect(JSON.parse(note.body)).toMatchObject({ duplicate: false, outcome: `/mainline merge on !${iid}` });
    expect((await gitlabRows(s)).length).toBeGreaterThan(before);
    await s.settle();
    expect((await s.pr(iid)).state).toBe('testing');
    // GitLab retries the same delivery: acknowledged, not carried out again.
    const again = await s.sim.redeliver(note);
    expect(again.status).toBe(202);
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: true });
  });

  it('/mainline merge from a Reporter or a non-member is refused with a note saying why; new commits take a queued merge request out; closing it cancels it', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    s.sim.addMember(GL_PATH, 'rita', 20);
    const iid = await s.openMr('feature', { 'f.txt': 'x\n' });
    await s.headGreen(iid);
    await s.sim.addNote(GL_PATH, iid, 'rita', '/mainline merge');
    await s.sim.addNote(GL_PATH, iid, 'stranger', '/mainline merge');
    await s.sim.flush();
    const outcomes = s.sim.deliveries
      .filter((d) => d.event === 'Note Hook')
      .map((d) => JSON.parse(d.body).outcome as string);
    expect(outcomes.filter((o) => /refused/.test(o))).toHaveLength(2);
    expect((await s.pr(iid)).error?.code).toBe('PR_NOT_FOUND');
    expect(s.sim.notes(GL_PATH, iid).some((n) => /less than Developer access/.test(n.body))).toBe(true);

    await s.submit(iid);
    await s.settle();
    const first = await s.testBranch(iid);
    await s.sim.commit(GL_PATH, 'feature', { 'f.txt': 'y\n' });
    await s.sim.flush();
    // As on Trunk: new commits take it out of the queue, to be submitted again.
    const restarted = await s.pr(iid);
    expect(restarted.state).toBe('cancelled');
    expect(restarted.stateReason).toMatch(/new commits were pushed/);
    await s.settle();
    expect(await s.testBranches(iid)).toEqual([]);
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    const second = await s.testBranch(iid);
    expect(second.sha).not.toBe(first.sha);
    expect(await s.sim.project(GL_PATH).repo.showFile(second.sha, 'f.txt')).toBe('y\n');

    await s.sim.closeMergeRequest(GL_PATH, iid);
    await s.sim.flush();
    await s.settle();
    expect((await s.pr(iid)).state).toBe('cancelled');
  });

  it("events of a project no organization was granted are ignored; another organization's repository of the same name is never touched", async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    // An unknown project: acknowledged, ignored.
    await s.sim.createProject('someone/else');
    await s.sim.commit('someone/else', 'x', { 'x.txt': 'x\n' });
    await s.sim.flush();
    const push = s.sim.deliveries.filter((d) => d.event === 'Push Hook').at(-1);
    expect(push?.status).toBe(202);
    expect(JSON.parse(push?.body ?? '{}').outcome).toMatch(/^ignored: someone is not granted/);

    // Organization "intruder" names the same GitLab repository: it cannot act on it through this server.
    const intruder = await s.t.token('intruder');
    const registered = await s.t.post('/v1/repositories/create', { repo: GL_REPO }, intruder);
    expect(registered.statusCode, registered.body).toBe(200);
    const created = await s.t.post('/v1/createQueue', { repo: GL_REPO, targetBranch: 'main' }, intruder);
    expect(created.statusCode, created.body).toBe(403);
    const iid = await s.openMr('feature', { 'f.txt': 'x\n' });
    await s.headGreen(iid);
    const refused = await s.t.post(
      '/v1/submitPullRequest',
      { repo: GL_REPO, targetBranch: 'main', pr: { number: iid } },
      intruder,
    );
    // It has no queue there to submit to (404), and could not have made one (403 above).
    expect(refused.statusCode, refused.body).toBe(404);
    // acme's queue takes it; the intruder's queue never hears of it.
    await s.submit(iid);
    await s.settle();
    await s.ciOnTestBranch(iid, 'success');
    await s.settle();
    expect((await s.pr(iid)).state).toBe('merged');
    const theirs = await s.t.post(
      '/v1/getSubmittedPullRequest',
      { repo: GL_REPO, targetBranch: 'main', pr: { number: iid } },
      intruder,
    );
    expect(theirs.statusCode).toBe(404);
  });
});
