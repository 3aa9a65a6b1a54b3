import { afterEach, describe, expect, it, vi } from 'vitest';
import { GitLabScenario, GL_PATH } from '../support/gitlab-sim/index.ts';

vi.setConfig({ testTimeout: 180_000 });

describe('a GitLab delivery that cannot be carried out', () => {
  let s: GitLabScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('is answered 503 and forgotten, so GitLab’s retry of the same event UUID is carried out', async () => {
    s = await GitLabScenario.create({ directMergeMode: 'off' });
    const iid = await s.openMr('feature', { 'f.txt': 'x\n' });
    await s.headGreen(iid);
    await s.submit(iid);
    await s.settle();
    const { sha } = await s.testBranch(iid);
    // GitLab's API fails while the job and pipeline events are processed (each read is tried 3 times).
    for (let i = 0; i < 6; i++)
      s.sim.faults.push({
        match: /^GET .*\/repository\/commits\/.*\/statuses$/,
        status: 502,
        message: 'bad gateway',
      });
    await s.sim.setStatus(GL_PATH, sha, 'ci', 'success');
    await s.sim.flush();
    const failed = s.sim.deliveries.filter((d) => d.event === 'Job Hook').at(-1);
    if (failed === undefined) throw new Error('no job delivery');
    expect(failed.status).toBe(503);
    expect(JSON.parse(failed.body).error.code).toBe('SERVICE_UNAVAILABLE');
    await s.settle();
    expect((await s.pr(iid)).state).toBe('testing');
    const retried = await s.sim.redeliver(failed);
    expect(retried.status).toBe(202);
    expect(JSON.parse(retried.body)).toMatchObject({
      duplicate: false,
      outcome: `statuses at ${sha.slice(0, 12)}: ci=success, gitlab/pipeline=success`,
    });
    await s.settle();
    expect((await s.pr(iid)).state).toBe('merged');
  });
});
