// The merge-queue reads over a queue whose finished PRs and runs were moved to the archive: pages of
// listPullRequests run on through archived and live submissions in submission order, filters keep
// their meaning, and an archived run names the titles of all the PRs it tested (read from the
// archive in one statement, src/app/queue/reads.ts). The field names are those Trunk's clients read
// (trunk-io/terraform-provider-trunk and trunk-io/merge-action: pullRequests, nextCursor, prNumber,
// testedPullRequests).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';

describe('merge-queue reads over the archive', () => {
  let s: GitScenario;
  let batchRun: string;
  const list = async (body: object) => {
    const res = await s.post('/v1/listPullRequests', { repo: REPO, targetBranch: 'main', ...body });
    expect(res.statusCode).toBe(200);
    return res.json() as { pullRequests: { prNumber: number; state: string }[]; nextCursor?: string };
  };
  const numbers = (page: { pullRequests: { prNumber: number }[] }) =>
    page.pullRequests.map((p) => p.prNumber);

  beforeAll(async () => {
    // Batches of three: one run tests three PRs, so its archived details need three archived PRs.
    s = await GitScenario.create({ directMergeMode: 'off', batch: true, batchingMinSize: 3 });
    for (const n of [1, 2, 3, 4, 5, 6]) await s.openPr(n, { [`f${n}.txt`]: `${n}\n` }, `Change ${n}`);
    for (const n of [1, 2, 3]) await s.submit(n);
    await s.settle();
    const [run] = await s.runsInProgress();
    expect(run?.tested).toEqual([1, 2, 3]);
    batchRun = run?.id as string;
    await s.ci('success');
    await s.settle();
    // 4 is cancelled (archived), 5 and 6 stay in the queue (live).
    for (const n of [4, 5, 6]) await s.submit(n);
    const cancel = await s.post('/v1/cancelPullRequest', {
      repo: REPO,
      targetBranch: 'main',
      pr: { number: 4 },
    });
    expect(cancel.statusCode).toBe(200);
    await s.settle();
  }, 60_000);
  afterAll(() => s?.close());

  it('pages through archived and live submissions in submission order', async () => {
    const pages: number[][] = [];
    let cursor: string | undefined;
    do {
      const page = await list({ take: 2, ...(cursor !== undefined ? { cursor } : {}) });
      pages.push(numbers(page));
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 10);
    expect(pages).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    expect(numbers(await list({ take: 6 }))).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await list({ take: 6 })).nextCursor).toBeUndefined();
    expect((await list({ take: 5 })).nextCursor).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps the state and since filters across the archive', async () => {
    expect(numbers(await list({ state: 'merged' }))).toEqual([1, 2, 3]);
    const firstMerged = await list({ state: 'merged', take: 1 });
    expect(numbers(firstMerged)).toEqual([1]);
    expect(numbers(await list({ state: 'merged', take: 1, cursor: firstMerged.nextCursor }))).toEqual([2]);
    expect(numbers(await list({ state: 'cancelled' }))).toEqual([4]);
    expect(numbers(await list({ since: '2000-01-01T00:00:00Z' }))).toEqual([1, 2, 3, 4, 5, 6]);
    expect(numbers(await list({ since: '2999-01-01T00:00:00Z' }))).toEqual([]);
  });

  it('gives an archived batch run’s details with the titles of every PR it tested', async () => {
    const res = await s.post('/v1/getMergeQueueTestingDetails', {
      repo: REPO,
      targetBranch: 'main',
      testRunId: batchRun,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'succeeded',
      testedPullRequests: [
        { prNumber: 1, title: 'Change 1' },
        { prNumber: 2, title: 'Change 2' },
        { prNumber: 3, title: 'Change 3' },
      ],
    });
    const submitted = await s.post('/v1/getSubmittedPullRequest', {
      repo: REPO,
      targetBranch: 'main',
      pr: { number: 2 },
    });
    expect(submitted.json()).toMatchObject({
      prNumber: 2,
      state: 'merged',
      isCurrentlySubmittedToQueue: false,
    });
    const metrics = await s.t.app.inject({
      method: 'GET',
      url: '/v1/getMergeQueueMetrics',
      headers: { 'x-api-token': s.token },
    });
    expect(metrics.body).toContain('mq_prs_total{repo="acme/web",branch="main",state="merged"} 3');
    expect(metrics.body).toContain('mq_prs_total{repo="acme/web",branch="main",state="cancelled"} 1');
  });
});
