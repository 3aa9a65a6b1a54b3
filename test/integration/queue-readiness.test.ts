import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';

/** Readiness: a PR joins the queue (or merges directly) only once its own required checks passed on its head. */
describe('the merge queue never merges untested code', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('does not merge directly an up-to-date PR whose required status never reported', async () => {
    s = await GitScenario.create({ directMergeMode: 'always', requiredStatuses: ['ci'] });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a', 'none');
    await s.submit(1);
    await s.settle();
    expect(s.history()).toEqual(['Initial commit']);
    const waiting = await s.pr(1);
    expect(waiting.state).toBe('not_ready');
    expect(waiting.stateReason).toMatch(/^waiting for required checks to pass on its head [0-9a-f]{12}: ci$/);

    await s.headCi(1, 'failure');
    await s.settle();
    expect(s.history()).toEqual(['Initial commit']);
    expect((await s.pr(1)).stateReason).toContain('required checks failed on its head');

    await s.headCi(1, 'success');
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
    expect((await s.pr(1)).stateReason).toContain('merged directly');
  });

  it('a new queue does not merge directly: an up-to-date PR with passed checks is still tested', async () => {
    s = await GitScenario.create();
    expect((await s.queue()).directMergeMode).toBe('off');
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    expect(s.history()).toEqual(['Initial commit']);
    expect((await s.pr(1)).state).toBe('testing');
    await s.ci('success', 1);
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
  });

  it('statuses reported on an old head never count for a new one', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a', 'none');
    await s.submit(1);
    await s.headCi(1, 'success'); // reported after the submission: it reaches the queue too
    await s.settle();
    expect((await s.pr(1)).state).toBe('testing');

    s.git('checkout', '-q', 'feature-1');
    s.commit({ 'a.txt': 'a2\n' }, 'Add a, again');
    s.git('push', '-q', '-f', 'origin', 'feature-1');
    await s.settle();
    expect((await s.pr(1)).state).toBe('cancelled');

    await s.submit(1);
    await s.settle();
    const waiting = await s.pr(1);
    expect(waiting.state).toBe('not_ready');
    expect(waiting.stateReason).toContain('waiting for required checks to pass on its head');
    await s.headCi(1, 'success');
    await s.settle();
    expect((await s.pr(1)).state).toBe('testing');
  });

  it('a queue without required statuses admits nothing and says how to fix it', async () => {
    s = await GitScenario.create({ directMergeMode: 'always', requiredStatuses: [] });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.headCi(1, 'success', 'lint');
    await s.submit(1);
    await s.settle();
    expect(s.history()).toEqual(['Initial commit']);
    const waiting = await s.pr(1);
    expect(waiting.state).toBe('not_ready');
    expect(waiting.stateReason).toContain('has no required statuses');
    expect(waiting.stateReason).toContain('set requiredStatuses with updateQueue');

    await s.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', requiredStatuses: ['lint'] });
    await s.settle();
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
  });
});
