import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app/context.ts';
import { WebhookDispatcher } from '../../src/app/webhooks-out/dispatch.ts';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { webhookDeliveryRows } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const silent = { info() {}, warn() {}, error() {} };
const PUBLIC_URL = 'https://mainline.example.test';
const ALLOW_PRIVATE = { MAINLINE_WEBHOOK_ALLOW_PRIVATE: '1' };

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly body: {
    id: string;
    type: string;
    created_at: string;
    organization: { id: string; slug: string };
    data: Record<string, unknown>;
  };
}

/**
 * A real HTTP receiver on 127.0.0.1: records every request, answers with the status `answer` gives
 * for its path (200 by default), or never answers for 'hang'.
 */
class Receiver {
  readonly received: Received[] = [];
  answer: (path: string) => number | 'hang' = () => 200;
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<Receiver> {
    let receiver: Receiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        receiver?.received.push({ path, headers: req.headers, raw, body: JSON.parse(raw) });
        const status = receiver?.answer(path) ?? 200;
        if (status === 'hang') return;
        res
          .writeHead(status, { 'content-type': 'text/plain' })
          .end(status >= 300 ? 'receiver says no' : 'ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new Receiver(server);
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function expectSigned(r: Received, secret: string): void {
  const expected = `sha256=${createHmac('sha256', secret).update(r.raw).digest('hex')}`;
  expect(r.headers['x-mainline-signature-256']).toBe(expected);
}

describe('outgoing webhooks: endpoints and test-health events', () => {
  let clock = Date.UTC(2026, 10, 1, 12);
  // The receiver is on loopback, which only the operator's opt-in lets webhooks reach.
  const t = useTestApp({ env: { MAINLINE_PUBLIC_URL: PUBLIC_URL, ...ALLOW_PRIVATE }, now: () => clock });
  let otherToken: string;
  let receiver: Receiver;
  let ctx: AppContext;
  let dispatcher: WebhookDispatcher;
  let hook: { id: string; secret: string };

  const deliveries = async (id: string, tok = t.orgToken) => t.post('/v1/webhooks/deliveries', { id }, tok);
  const deliveryRows = () => webhookDeliveryRows(t);

  beforeAll(async () => {
    otherToken = await t.token('globex');
    receiver = await Receiver.start();
    ctx = { db: t.db.database.db, config: t.config, now: () => clock, caches: t.caches };
    dispatcher = new WebhookDispatcher(ctx, silent);
  });
  afterAll(() => receiver.close());

  it('refuses URLs that are not absolute http(s), unknown event types (naming the valid ones), and empty lists', async () => {
    for (const url of ['ftp://example.com/hook', '/hooks/relative', 'not a url', 'file:///etc/passwd']) {
      const res = await t.post('/v1/webhooks/create', { url, events: ['test.quarantined'] }, t.orgToken);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: [{ path: '$.url', expected: 'an absolute http:// or https:// URL' }],
      });
    }
    const unknown = await t.post(
      '/v1/webhooks/create',
      { url: receiver.url('/x'), events: ['test.quarantined', 'test.exploded'] },
      t.orgToken,
    );
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.code).toBe('VALIDATION_FAILED');
    expect(unknown.json().error.details).toEqual([
      {
        path: '$.events[1]',
        expected:
          'one of "test.status_changed", "test.quarantined", "pull_request.merged", "pull_request.failed"',
        message: expect.stringContaining('$.events[1] must be one of "test.status_changed"'),
      },
    ]);
    const empty = await t.post('/v1/webhooks/create', { url: receiver.url('/x'), events: [] }, t.orgToken);
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.details[0].path).toBe('$.events');
    const missing = await t.post('/v1/webhooks/create', { events: ['test.quarantined'] }, t.orgToken);
    expect(missing.json().error.details[0]).toMatchObject({ path: '$.url' });
    const anonymous = await t.post('/v1/webhooks/create', {
      url: receiver.url('/x'),
      events: ['test.quarantined'],
    });
    expect(anonymous.statusCode).toBe(401);
    const wrongOrg = await t.post('/v1/webhooks/list', { org_url_slug: 'globex' }, t.orgToken);
    expect(wrongOrg.statusCode).toBe(404);
    expect(wrongOrg.json().error.code).toBe('ORG_NOT_FOUND');
    expect(await deliveryRows()).toEqual([]);
  });

  it('creates an endpoint (secret shown once) and lists it without the secret', async () => {
    const created = await t.post(
      '/v1/webhooks/create',
      {
        url: receiver.url('/health'),
        events: ['test.quarantined', 'test.status_changed', 'test.status_changed'],
        description: 'health to chat',
      },
      t.orgToken,
    );
    expect(created.statusCode).toBe(200);
    const body = created.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: receiver.url('/health'),
      events: ['test.status_changed', 'test.quarantined'],
      description: 'health to chat',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{40,}$/),
      created_at: new Date(clock).toISOString(),
    });
    hook = { id: body.id, secret: body.secret };
    const listed = await t.post('/v1/webhooks/list', {}, t.orgToken);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({
      webhooks: [
        {
          id: hook.id,
          url: receiver.url('/health'),
          events: ['test.status_changed', 'test.quarantined'],
          description: 'health to chat',
          created_at: new Date(clock).toISOString(),
          disabled: false,
        },
      ],
    });
    expect(listed.body).not.toContain('whsec_');
  });

  it('another organization neither sees nor deletes the endpoint, nor reads its deliveries', async () => {
    expect((await t.post('/v1/webhooks/list', {}, otherToken)).json()).toEqual({ webhooks: [] });
    const del = await t.post('/v1/webhooks/delete', { id: hook.id }, otherToken);
    expect(del.statusCode).toBe(404);
    expect(del.json().error.code).toBe('WEBHOOK_NOT_FOUND');
    expect((await deliveries(hook.id, otherToken)).statusCode).toBe(404);
    expect((await t.post('/v1/webhooks/list', {}, t.orgToken)).json().webhooks).toHaveLength(1);
  });

  it('fail then pass on one commit → test.status_changed and test.quarantined, signed, once each', async () => {
    const failing = junitXml([{ name: 'test_login', fail: 'AssertionError: boom' }, { name: 'test_ok' }]);
    await upload(t, t.orgToken, [{ name: 'a.xml', content: failing }], { sha: 'c0ffee01', pr: 7 });
    expect(await dispatcher.runOnce()).toBe(0);
    clock += 60_000;
    const passing = junitXml([{ name: 'test_login' }, { name: 'test_ok' }]);
    await upload(t, t.orgToken, [{ name: 'a.xml', content: passing }], { sha: 'c0ffee01', pr: 7 });
    const enqueuedAt = clock;
    clock += 1_000;
    expect(await dispatcher.runOnce()).toBe(2);
    expect(await dispatcher.runOnce()).toBe(0);

    const got = receiver.at('/health');
    expect(got.map((r) => r.body.type).sort()).toEqual(['test.quarantined', 'test.status_changed']);
    for (const r of got) {
      expectSigned(r, hook.secret);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe('Mainline-Webhooks');
      expect(r.headers['x-mainline-event']).toBe(r.body.type);
      expect(r.headers['x-mainline-delivery']).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.body.created_at).toBe(new Date(enqueuedAt).toISOString());
      expect(r.body.organization.slug).toBe('acme');
    }
    const status = got.find((r) => r.body.type === 'test.status_changed')!.body;
    const testId = (status.data['test'] as { id: string }).id;
    const testUrl = `${PUBLIC_URL}/acme/repos/github.com/acme/web/tests/${testId}`;
    expect(status.data).toEqual({
      test: {
        id: testId,
        name: 'test_login',
        parent: 'suite',
        classname: 'pkg.Class',
        file: null,
        variant: '',
        html_url: testUrl,
      },
      repository: { ...REPO, html_url: `${PUBLIC_URL}/acme/repos/github.com/acme/web` },
      html_url: testUrl,
      previous_status: 'healthy',
      status: 'flaky',
      reason: expect.stringMatching(/^Failed and passed on the same commit c0ffee0/),
      changed_at: new Date(enqueuedAt).toISOString(),
      quarantined: true,
    });
    const quarantine = got.find((r) => r.body.type === 'test.quarantined')!.body;
    expect(quarantine.data).toMatchObject({
      test: { id: testId, name: 'test_login', html_url: testUrl },
      html_url: testUrl,
      quarantined: true,
      setting: 'AUTO_QUARANTINE',
      status: 'flaky',
    });
    expect(quarantine.id).not.toBe(status.id);

    const listed = (await deliveries(hook.id)).json().deliveries;
    expect(listed).toHaveLength(2);
    for (const d of listed) {
      expect(d).toMatchObject({ status: 'delivered', attempts: 1, last_status: 200, last_error: null });
      expect(d.delivered_at).toBe(new Date(clock).toISOString());
      expect(d.next_attempt_at).toBeNull();
    }
  });

  it('an organization without endpoints gets no deliveries', async () => {
    const globexRepo = { host: 'github.com', owner: 'globex', name: 'api' };
    const before = (await deliveryRows()).length;
    const failing = junitXml([{ name: 'test_x', fail: 'boom' }]);
    await upload(t, otherToken, [{ name: 'a.xml', content: failing }], {
      org: 'globex',
      repo: globexRepo,
      sha: 'd1',
    });
    await upload(t, otherToken, [{ name: 'a.xml', content: junitXml([{ name: 'test_x' }]) }], {
      org: 'globex',
      repo: globexRepo,
      sha: 'd1',
    });
    const flaky = await t.post(
      '/v1/flaky-tests/list-unhealthy-tests',
      { repo: globexRepo, org_url_slug: 'globex', status: 'FLAKY', page_query: { page_size: 10 } },
      otherToken,
    );
    expect(flaky.json().tests.map((x: { name: string }) => x.name)).toEqual(['test_x']);
    expect((await deliveryRows()).length).toBe(before);
    expect(await dispatcher.runOnce()).toBe(0);
  });

  it('a receiver answering 500 gets the same delivery again after the backoff, until it accepts it', async () => {
    let failures = 2;
    receiver.answer = (path) => (path === '/health' && failures-- > 0 ? 500 : 204);
    const before = receiver.at('/health').length;
    await upload(t, t.orgToken, [{ name: 'b.xml', content: junitXml([{ name: 'test_pay', fail: 'x' }]) }], {
      sha: 'beef01',
    });
    clock += 60_000;
    await upload(t, t.orgToken, [{ name: 'b.xml', content: junitXml([{ name: 'test_pay' }]) }], {
      sha: 'beef01',
    });
    expect(await dispatcher.runOnce()).toBe(2);
    let listed = (await deliveries(hook.id)).json().deliveries.slice(0, 2);
    for (const d of listed) {
      expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status: 500 });
      // The status only: nothing of what the receiver answered ("receiver says no") is kept.
      expect(d.last_error).toBe('receiver answered 500');
      expect(d.next_attempt_at).toBe(new Date(clock + 10_000).toISOString());
    }
    expect(await dispatcher.runOnce()).toBe(0);
    clock += 9_999;
    expect(await dispatcher.runOnce()).toBe(0);
    clock += 1;
    expect(await dispatcher.runOnce()).toBe(2);
    listed = (await deliveries(hook.id)).json().deliveries.slice(0, 2);
    for (const d of listed) expect(d).toMatchObject({ status: 'delivered', attempts: 2, last_status: 204 });

    const retried = receiver.at('/health').slice(before);
    expect(retried).toHaveLength(4);
    const byDelivery = new Map<string, Received[]>();
    for (const r of retried) {
      const id = r.headers['x-mainline-delivery'] as string;
      byDelivery.set(id, [...(byDelivery.get(id) ?? []), r]);
    }
    expect([...byDelivery.values()].map((rs) => rs.length)).toEqual([2, 2]);
    for (const [, [first, second]] of byDelivery) {
      expect(second!.raw).toBe(first!.raw);
      expectSigned(second!, hook.secret);
    }
    receiver.answer = () => 200;
  });

  it('gives a delivery up after 8 failed attempts, and counts a receiver that does not answer as failed', async () => {
    const created = await t.post(
      '/v1/webhooks/create',
      { url: receiver.url('/down'), events: ['test.status_changed'] },
      t.orgToken,
    );
    const down = created.json().id as string;
    receiver.answer = (path) => (path === '/down' ? 'hang' : 200);
    await upload(t, t.orgToken, [{ name: 'c.xml', content: junitXml([{ name: 'test_net', fail: 'x' }]) }], {
      sha: 'abc01',
    });
    clock += 60_000;
    await upload(t, t.orgToken, [{ name: 'c.xml', content: junitXml([{ name: 'test_net' }]) }], {
      sha: 'abc01',
    });
    const impatient = new WebhookDispatcher(ctx, silent, { timeoutMs: 200 });
    expect(await impatient.runOnce()).toBe(3);
    let [d] = (await deliveries(down)).json().deliveries;
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status: null });
    expect(d.last_error).toBe('no response within 200 ms');

    receiver.answer = (path) => (path === '/down' ? 503 : 200);
    for (let attempt = 2; attempt <= 8; attempt++) {
      clock += 13 * 3_600_000;
      expect(await dispatcher.runOnce(), `attempt ${attempt}`).toBe(1);
    }
    [d] = (await deliveries(down)).json().deliveries;
    expect(d).toMatchObject({ status: 'failed', attempts: 8, last_status: 503, next_attempt_at: null });
    expect(d.failed_at).toBe(new Date(clock).toISOString());
    clock += 24 * 3_600_000;
    expect(await dispatcher.runOnce()).toBe(0);
    receiver.answer = () => 200;
  });

  it('a delivery is sent by one dispatcher only, even when two run at once', async () => {
    await upload(t, t.orgToken, [{ name: 'd.xml', content: junitXml([{ name: 'test_race', fail: 'x' }]) }], {
      sha: 'race01',
    });
    clock += 60_000;
    await upload(t, t.orgToken, [{ name: 'd.xml', content: junitXml([{ name: 'test_race' }]) }], {
      sha: 'race01',
    });
    const before = receiver.received.length;
    const other = new WebhookDispatcher(ctx, silent);
    const [a, b] = await Promise.all([dispatcher.runOnce(), other.runOnce()]);
    const sent = receiver.received.slice(before);
    expect(a + b).toBe(sent.length);
    expect(new Set(sent.map((r) => r.headers['x-mainline-delivery'])).size).toBe(sent.length);
    expect(sent.map((r) => r.body.type).sort()).toEqual([
      'test.quarantined',
      'test.status_changed',
      'test.status_changed',
    ]);
  });

  it('lists deliveries newest first with a limit; deleting the endpoint drops it and its deliveries', async () => {
    const limited = await t.post('/v1/webhooks/deliveries', { id: hook.id, limit: 1 }, t.orgToken);
    expect(limited.statusCode).toBe(200);
    expect(limited.json().deliveries).toHaveLength(1);
    const tooMany = await t.post('/v1/webhooks/deliveries', { id: hook.id, limit: 1000 }, t.orgToken);
    expect(tooMany.statusCode).toBe(400);
    const badId = await t.post('/v1/webhooks/delete', { id: 'nope' }, t.orgToken);
    expect(badId.statusCode).toBe(400);
    expect(badId.json().error.details[0].path).toBe('$.id');

    const del = await t.post('/v1/webhooks/delete', { id: hook.id }, t.orgToken);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({});
    expect((await t.post('/v1/webhooks/delete', { id: hook.id }, t.orgToken)).statusCode).toBe(404);
    expect((await deliveries(hook.id)).json().error.code).toBe('WEBHOOK_NOT_FOUND');
    const listed = (await t.post('/v1/webhooks/list', {}, t.orgToken)).json().webhooks;
    expect(listed.map((w: { url: string }) => w.url)).toEqual([receiver.url('/down')]);
    expect((await deliveryRows()).some((r) => r.endpoint_id === hook.id)).toBe(false);
  });
});

describe('outgoing webhooks: merge-queue events', () => {
  let s: GitScenario | undefined;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
  });
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });
  afterAll(() => receiver.close());

  it('a merged PR → pull_request.merged with the merged sha; a failing one → pull_request.failed with the reason', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' }, undefined, ALLOW_PRIVATE);
    const scenario = s;
    const created = await s.post('/v1/webhooks/create', {
      url: receiver.url('/queue'),
      events: ['pull_request.merged', 'pull_request.failed'],
    });
    expect(created.statusCode).toBe(200);
    const secret = created.json().secret as string;
    const dispatcher = new WebhookDispatcher(
      { db: s.t.db.database.db, config: s.t.config, now: () => scenario.clock, caches: s.t.caches },
      silent,
    );

    await s.openPr(1, { 'a.txt': 'a\n' }, 'Add a');
    await s.submit(1);
    await s.settle();
    await s.ci('success', 1);
    await s.settle();
    expect((await s.pr(1)).state).toBe('merged');
    await s.settle();

    await s.openPr(2, { 'b.txt': 'b\n' }, 'Break b');
    await s.submit(2);
    await s.settle();
    await s.ci('failure', 2);
    await s.settle();
    expect((await s.pr(2)).state).toBe('failed');
    await s.settle();

    expect(await dispatcher.runOnce()).toBe(2);
    const got = receiver.at('/queue');
    expect(got.map((r) => r.body.type).sort()).toEqual(['pull_request.failed', 'pull_request.merged']);
    for (const r of got) expectSigned(r, secret);

    const merged = got.find((r) => r.body.type === 'pull_request.merged')!.body;
    expect(merged.data).toEqual({
      repository: { ...REPO, html_url: expect.stringMatching(/\/acme\/repos\/github\.com\/acme\/web$/) },
      queue: { branch: 'main' },
      pull_request: {
        number: 1,
        title: 'Add a',
        author: 'dev',
        head_sha: expect.stringMatching(/^[0-9a-f]{40}$/),
        submission_id: expect.any(String),
      },
      state: 'merged',
      reason: expect.stringContaining('merged into main'),
      merged_sha: s.bareGit('rev-parse', 'main'),
      changed_at: expect.any(String),
    });
    // PR 2 failed on top of PR 1's merge; main did not move since.
    const failed = got.find((r) => r.body.type === 'pull_request.failed')!.body;
    expect(failed.data).toMatchObject({
      queue: { branch: 'main' },
      pull_request: { number: 2, title: 'Break b' },
      state: 'failed',
      reason: expect.stringMatching(/ci/),
      merged_sha: null,
    });
    expect(s.history()).toEqual(['Add a (#1)', 'Initial commit']);
  });
});

describe('outgoing webhooks: which addresses they may reach', () => {
  // Each test builds its own app: each its own private-target setting, two listening on a port.
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await Receiver.start();
  });
  afterAll(() => receiver.close());

  const create = (t: TestApp, token: string, url: string) =>
    t.post('/v1/webhooks/create', { url, events: ['test.status_changed'] }, token);
  /** A test failing then passing on one commit: a test.status_changed event for every endpoint. */
  const flip = async (t: TestApp, token: string, name: string, advance: () => void) => {
    await upload(t, token, [{ name: 'a.xml', content: junitXml([{ name, fail: 'boom' }]) }], { sha: name });
    advance();
    await upload(t, token, [{ name: 'a.xml', content: junitXml([{ name }]) }], { sha: name });
  };
  const newest = async (t: TestApp, token: string, id: string) => {
    const res = await t.post('/v1/webhooks/deliveries', { id, limit: 1 }, token);
    return { raw: res.body, delivery: res.json().deliveries[0] };
  };

  it('with the default config, loopback and private targets (the server itself included) are refused at creation, naming the setting', async () => {
    const t = await buildTestApp();
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const port = (t.app.server.address() as AddressInfo).port;
      const token = await t.token('acme');
      const refused: [string, string][] = [
        [`http://127.0.0.1:${port}/v1/repositories/list`, '127.0.0.1 is a loopback address'],
        [`http://localhost:${port}/v1/repositories/list`, 'localhost resolves only to refused addresses'],
        ['http://[::1]:9/hook', '::1 is a loopback address'],
        ['http://[::ffff:127.0.0.1]:9/hook', '(IPv4 127.0.0.1) is a loopback address'],
        ['http://2130706433:9/hook', '127.0.0.1 is a loopback address'],
        ['http://10.0.0.5/hook', '10.0.0.5 is a private address'],
        ['https://192.168.1.20/hook', '192.168.1.20 is a private address'],
      ];
      for (const [url, what] of refused) {
        const res = await create(t, token, url);
        expect(res.statusCode, url).toBe(400);
        expect(res.json().error, url).toMatchObject({
          code: 'VALIDATION_FAILED',
          message: expect.stringContaining(what),
          details: [{ path: '$.url', expected: 'a URL whose host is a public address' }],
        });
        expect(res.json().error.message).toContain('unless the server sets MAINLINE_WEBHOOK_ALLOW_PRIVATE=1');
      }
      expect((await t.post('/v1/webhooks/list', {}, token)).json()).toEqual({ webhooks: [] });
    } finally {
      await t.close();
    }
  });

  it('link-local, cloud metadata and unspecified targets are refused even when private targets are allowed', async () => {
    const t = await buildTestApp(ALLOW_PRIVATE);
    try {
      const token = await t.token('acme');
      for (const url of [
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:169.254.169.254]/latest/meta-data/',
        'http://[fd00:ec2::254]/',
        'http://100.100.100.200/latest/meta-data/',
        'http://[fe80::1]/hook',
        'http://0.0.0.0:9/hook',
        'http://[::]:9/hook',
      ]) {
        const res = await create(t, token, url);
        expect(res.statusCode, url).toBe(400);
        expect(res.json().error.message, url).toContain('refused whatever the server settings');
        expect(res.json().error.message, url).not.toContain('MAINLINE_WEBHOOK_ALLOW_PRIVATE');
      }
      expect((await create(t, token, receiver.url('/allowed'))).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('finding 4: a webhook at the server’s own /v1/repositories/list never shows its answer; with the setting off, nothing is sent', async () => {
    let clock = Date.UTC(2026, 10, 3, 12);
    const t = await buildTestApp(ALLOW_PRIVATE, { now: () => clock });
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const own = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/repositories/list`;
      const token = await t.token('acme');
      // What the server answers a delivery there: the bytes the finding saw in last_error.
      const answer = await (await fetch(own, { method: 'POST', body: '{}' })).text();
      expect(answer).toContain('AUTHENTICATION_REQUIRED');
      const ownHook = (await create(t, token, own)).json().id as string;
      const named = (await create(t, token, receiver.url('/named').replace('127.0.0.1', 'localhost'))).json()
        .id as string;
      const moved = (await create(t, token, receiver.url('/moved'))).json().id as string;
      receiver.answer = (path) => (path === '/moved' ? 307 : 200);

      await flip(t, token, 'test_one', () => {
        clock += 60_000;
      });
      const ctx = { db: t.db.database.db, config: t.config, now: () => clock, caches: t.caches };
      expect(await new WebhookDispatcher(ctx, silent).runOnce()).toBe(3);
      const first = await newest(t, token, ownHook);
      expect(first.delivery).toMatchObject({ status: 'pending', last_status: 401 });
      expect(first.delivery.last_error).toBe('receiver answered 401');
      expect(first.raw).not.toContain('AUTHENTICATION_REQUIRED');
      expect(first.raw).not.toContain(answer.slice(0, 20));
      // A host name is resolved, checked and connected to (here localhost → 127.0.0.1, allowed).
      expect((await newest(t, token, named)).delivery).toMatchObject({
        status: 'delivered',
        last_status: 200,
      });
      expect(receiver.at('/named')).toHaveLength(1);
      expect((await newest(t, token, moved)).delivery).toMatchObject({
        status: 'pending',
        last_status: 307,
        last_error: 'receiver answered 307 (redirects are not followed)',
      });

      // The operator turns the setting off (the default): every attempt from now on is refused before
      // any connection, whether the URL holds the address or a name that resolves to it.
      receiver.answer = () => 200;
      const sentBefore = receiver.received.length;
      await flip(t, token, 'test_two', () => {
        clock += 60_000;
      });
      const strict = { ...ctx, config: { ...t.config, webhookAllowPrivate: false } };
      expect(await new WebhookDispatcher(strict, silent).runOnce()).toBe(5);
      expect(receiver.received.length).toBe(sentBefore);
      for (const id of [ownHook, moved]) {
        expect((await newest(t, token, id)).delivery).toMatchObject({
          status: 'pending',
          last_status: null,
          last_error: 'address not allowed: 127.0.0.1 is a loopback address',
        });
      }
      expect((await newest(t, token, named)).delivery).toMatchObject({
        status: 'pending',
        last_status: null,
        last_error: expect.stringMatching(/^address not allowed: (127\.0\.0\.1|::1) is a loopback address$/),
      });
    } finally {
      receiver.answer = () => 200;
      await t.close();
    }
  });
});
