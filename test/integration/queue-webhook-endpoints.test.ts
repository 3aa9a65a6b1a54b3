// A merge-queue step enqueues pull_request.merged / pull_request.failed for the endpoints the organization
// has when the step runs: an endpoint added or deleted between two events counts from the next one. The
// endpoint lookup costs ~0.15 ms per finishing event; whatever spares it (a flag kept per process, read
// with the queue row) must keep this true.
import { afterEach, describe, expect, it } from 'vitest';
import { GitScenario } from '../support/git-scenario.ts';
import { webhookDeliveryRows } from '../support/reads.ts';

describe('merge-queue webhook events follow the endpoints of the moment', () => {
  let s: GitScenario | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('none without an endpoint, one from the event after it is added, none after it is deleted', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' }, undefined, {
      MAINLINE_WEBHOOK_ALLOW_PRIVATE: '1',
    });
    const merge = async (n: number, ci: 'success' | 'failure') => {
      const scenario = s as GitScenario;
      await scenario.openPr(n, { [`f${n}.txt`]: `${n}\n` });
      await scenario.submit(n);
      await scenario.settle();
      await scenario.ci(ci, n);
      await scenario.settle();
      expect((await scenario.pr(n)).state).toBe(ci === 'success' ? 'merged' : 'failed');
    };
    await merge(1, 'success');
    expect(await webhookDeliveryRows(s.t)).toEqual([]);

    const created = await s.post('/v1/webhooks/create', {
      url: 'http://127.0.0.1:9/queue',
      events: ['pull_request.merged', 'pull_request.failed'],
    });
    expect(created.statusCode, created.body).toBe(200);
    await merge(2, 'success');
    await merge(3, 'failure');
    const types = (await webhookDeliveryRows(s.t)).map((r) => r.event_type).sort();
    expect(types).toEqual(['pull_request.failed', 'pull_request.merged']);

    const deleted = await s.post('/v1/webhooks/delete', { id: created.json().id });
    expect(deleted.statusCode, deleted.body).toBe(200);
    await merge(4, 'success');
    // Deleting the endpoint dropped its deliveries; PR 4's merge made none.
    expect(await webhookDeliveryRows(s.t)).toEqual([]);
  }, 300_000);
});
