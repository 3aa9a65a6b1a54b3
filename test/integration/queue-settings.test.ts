import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { trunkValidator } from '../support/trunk-schema.ts';
import { useTestApp } from '../support/use-test-app.ts';

const validConfig = trunkValidator('QueueConfigOut');
const INTEGERS = [
  'concurrency',
  'bisectionConcurrency',
  'testingTimeoutMinutes',
  'pendingFailureDepth',
  'batchingMaxWaitTimeMinutes',
  'batchingMinSize',
];
const ENUMS: Record<string, string[]> = {
  state: ['running', 'paused', 'draining'],
  mode: ['single', 'parallel'],
  directMergeMode: ['off', 'always'],
  optimizationMode: ['off', 'bisection_skip_redundant_tests'],
  mergeMethod: ['merge_commit', 'squash', 'rebase'],
};

describe('queue settings: createQueue, getQueue, updateQueue, deleteQueue', () => {
  const t = useTestApp();
  const queue = { repo: REPO, targetBranch: 'main' };
  const update = (fields: object) => t.post('/v1/updateQueue', { ...queue, ...fields }, t.orgToken);

  beforeAll(async () => {
    expect(
      (await t.post('/v1/createQueue', { ...queue, mode: 'SINGLE', concurrency: 3 }, t.orgToken)).statusCode,
    ).toBe(200);
  });

  it('createQueue creates the repository on first use and answers 409 for a second queue on the branch', async () => {
    const again = await t.post('/v1/createQueue', queue, t.orgToken);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('ALREADY_EXISTS');
    expect((await t.post('/v1/repositories/get', { repo: REPO }, t.orgToken)).statusCode).toBe(200);
  });

  it('getQueue answers the full settings record plus the queued pull requests, in Trunk’s shape', async () => {
    const res = await t.post('/v1/getQueue', queue, t.orgToken);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const { enqueuedPullRequests, ...config } = body;
    expect(validConfig(config)).toEqual([]);
    expect(enqueuedPullRequests).toEqual([]);
    expect(body).toMatchObject({
      state: 'running',
      branch: 'main',
      mode: 'single',
      concurrency: 3,
      requiredStatuses: [],
    });
  });

  it.each(INTEGERS)(
    '%s accepts 1 and 4294967295 and refuses 0 (pendingFailureDepth takes it), 4294967296, 1.5, "3" and null',
    async (field) => {
      // terraform-provider-trunk allows pending_failure_depth = 0, the queue's default (replay-terraform).
      const zeroOk = field === 'pendingFailureDepth';
      for (const ok of zeroOk ? [0, 1, 4294967295] : [1, 4294967295]) {
        const res = await update({ [field]: ok });
        expect(res.statusCode, `${field}=${ok}`).toBe(200);
        expect(res.json()[field]).toBe(ok);
        expect(validConfig(res.json())).toEqual([]);
      }
      for (const bad of [...(zeroOk ? [] : [0]), 4294967296, 1.5, '3', null, -1]) {
        const res = await update({ [field]: bad });
        expect(res.statusCode, `${field}=${JSON.stringify(bad)}`).toBe(400);
        expect(res.json().error.code).toBe('VALIDATION_FAILED');
        expect(res.json().error.details.map((d: { path: string }) => d.path)).toContain(`$.${field}`);
      }
    },
  );

  it.each(Object.entries(ENUMS))(
    '%s takes every value in any case and answers it in lower case',
    async (field, values) => {
      for (const value of values) {
        for (const sent of [value, value.toUpperCase()]) {
          const res = await update({ [field]: sent });
          expect(res.statusCode, `${field}=${sent}`).toBe(200);
          if (field !== 'state' && field !== 'mode') expect(res.json()[field]).toBe(value);
        }
      }
      const bad = await update({ [field]: 'sideways' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.details[0]).toMatchObject({
        path: `$.${field}`,
        expected: expect.stringContaining(values[0]!),
      });
      await update({ state: 'running', mode: 'single' });
    },
  );

  it('refuses state switching_modes: it is only ever reported', async () => {
    expect((await update({ state: 'switching_modes' })).statusCode).toBe(400);
  });

  it('takes every boolean, and accepts the fields terraform sends', async () => {
    const flags = {
      canOptimisticallyMerge: true,
      batch: true,
      commentsEnabled: false,
      commandsEnabled: false,
      createPrsForTestingBranches: false,
      statusCheckEnabled: false,
    };
    const res = await update({
      ...flags,
      extensionEnabled: true,
      enqueueingLabel: 'merge',
      labelCommandsEnabled: false,
      stateLabelsEnabled: false,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      ...flags,
      extensionEnabled: true,
      enqueueingLabel: 'merge',
      labelCommandsEnabled: false,
      stateLabelsEnabled: false,
    });
    expect((await update({ batch: 'yes' })).statusCode).toBe(400);
  });

  it('requiredStatuses overrides the other sources; deleteRequiredStatuses restores them', async () => {
    expect((await update({ requiredStatuses: ['build', 'test'] })).json().requiredStatuses).toEqual([
      'build',
      'test',
    ]);
    expect((await t.post('/v1/getQueue', queue, t.orgToken)).json().requiredStatuses).toEqual([
      'build',
      'test',
    ]);
    expect((await update({ deleteRequiredStatuses: true })).json().requiredStatuses).toEqual([]);
  });

  it('answers an unknown repository or branch with 404', async () => {
    const noRepo = await t.post(
      '/v1/updateQueue',
      { repo: { ...REPO, name: 'nope' }, targetBranch: 'main', batch: true },
      t.orgToken,
    );
    expect(noRepo.statusCode).toBe(404);
    expect(noRepo.json().error.code).toBe('REPO_NOT_FOUND');
    const noBranch = await t.post(
      '/v1/updateQueue',
      { repo: REPO, targetBranch: 'release', batch: true },
      t.orgToken,
    );
    expect(noBranch.statusCode).toBe(404);
    expect(noBranch.json().error.code).toBe('QUEUE_NOT_FOUND');
    expect(
      (await t.post('/v1/getQueue', { repo: REPO, targetBranch: 'release' }, t.orgToken)).statusCode,
    ).toBe(404);
  });

  it('another organization cannot see or change the queue', async () => {
    const other = await t.token('globex');
    const res = await t.post('/v1/getQueue', queue, other);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('REPO_NOT_FOUND');
  });

  it('getMergeQueueTestingDetails answers 404 for an unknown test run', async () => {
    const res = await t.post('/v1/getMergeQueueTestingDetails', { ...queue, testRunId: 'nope' }, t.orgToken);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('TEST_RUN_NOT_FOUND');
  });

  it('getMergeQueueMetrics answers Prometheus text and needs repoHost with repo', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/getMergeQueueMetrics?repo=acme/web&repoHost=github.com',
      headers: { 'x-api-token': t.orgToken },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain; version=0.0.4');
    expect(res.body).toContain('mq_depth_current{repo="acme/web",branch="main",queue_type="main"} 0');
    const bad = await t.app.inject({
      method: 'GET',
      url: '/v1/getMergeQueueMetrics?repo=acme/web',
      headers: { 'x-api-token': t.orgToken },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('deleteQueue removes an empty queue', async () => {
    expect((await t.post('/v1/deleteQueue', queue, t.orgToken)).statusCode).toBe(200);
    expect((await t.post('/v1/getQueue', queue, t.orgToken)).statusCode).toBe(404);
  });
});

describe('updateQueue state while a mode switch waits for a run in flight', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });
  const update = (fields: object) =>
    s!.post('/v1/updateQueue', { repo: REPO, targetBranch: 'main', ...fields });

  /** PR 1 testing on a single-mode queue, then a switch to parallel mode asked for. */
  async function switching(): Promise<GitScenario> {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    const res = await update({ mode: 'parallel' });
    expect(res.json()).toMatchObject({ state: 'switching_modes', mode: 'single', pendingMode: 'parallel' });
    return s;
  }

  it('draining and paused are answered as such and keep the switch, which completes when the run merges', async () => {
    s = await switching();
    const draining = await update({ state: 'DRAINING' });
    expect(draining.statusCode).toBe(200);
    expect(draining.json()).toMatchObject({ state: 'draining', mode: 'single', pendingMode: 'parallel' });
    expect(validConfig(draining.json())).toEqual([]);
    expect((await update({ state: 'paused' })).json()).toMatchObject({
      state: 'paused',
      pendingMode: 'parallel',
    });
    expect((await s.queue()).state).toBe('paused');
    expect((await update({ state: 'draining' })).json().state).toBe('draining');

    await s.ci('success', 1);
    await s.settle();
    const queue = await s.queue();
    expect(queue).toMatchObject({ state: 'draining', mode: 'parallel' });
    expect(queue).not.toHaveProperty('pendingMode');
    expect(s.history()[0]).toBe('Add a (#1)');
  });

  it('running is answered as running: it ends the switch and the queue keeps its mode', async () => {
    s = await switching();
    const running = await update({ state: 'running' });
    expect(running.json()).toMatchObject({ state: 'running', mode: 'single' });
    expect(running.json()).not.toHaveProperty('pendingMode');
    await s.ci('success', 1);
    await s.settle();
    expect(await s.queue()).toMatchObject({ state: 'running', mode: 'single' });
    expect(s.history()[0]).toBe('Add a (#1)');
  });

  it('a mode in the same request applies after the state: running with a new mode is a switch', async () => {
    s = await switching();
    expect((await update({ state: 'running', mode: 'parallel' })).json()).toMatchObject({
      state: 'switching_modes',
      pendingMode: 'parallel',
    });
  });
});
