import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantOwner } from '../../src/app/forge-grants.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { type GitHubSimulator, startGitHubSimulator } from '../support/github-sim/index.ts';
import { type RunningServer, runCli, startServerProcess } from '../support/process.ts';
import { junitXml, multipart } from '../support/upload.ts';

/**
 * Secrets never reach the logs. A real server process (`mainline serve`, LOG_LEVEL=trace, stdout
 * captured) is configured with every kind of secret — a bootstrap token, a GitHub token and webhook
 * secret (pointed at the GitHub simulator on loopback), a metrics token — and then used with them:
 * API tokens in x-api-token and in Authorization: Bearer, a wrong token, a token inside a failing
 * request's body, a dashboard sign-in, an outgoing webhook whose receiver fails (so the dispatcher
 * logs), GitHub API calls that fail (so the forge logs), signed and badly signed GitHub deliveries.
 * Then no secret may appear anywhere in what the server printed.
 */
const secret = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;

const SECRETS = {
  bootstrap: secret('bootstrap-'),
  githubToken: secret('ghp_'),
  githubWebhookSecret: secret('gh-hook-'),
  metricsToken: secret('metrics-'),
  unknownToken: secret('ml_'),
};

const REPO = { host: 'git.example', owner: 'acme', name: 'web' };
const GH_REPO = { host: 'github.com', owner: 'acme', name: 'widgets' };

/** Waits until `check` holds, polling. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('secrets never appear in the logs', () => {
  let db: TestDatabase;
  let sim: GitHubSimulator;
  let server: RunningServer;
  let receiver: http.Server;
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let root: string;
  /** Secrets the server hands out while the test runs (API token, webhook secret, session cookie). */
  const issued: Record<string, string> = {};
  let bundleSignature = '';
  let lastRequestId = '';

  const api = (
    url: string,
    init: {
      token?: string;
      bearer?: string;
      body?: string;
      method?: string;
      headers?: Record<string, string>;
    },
  ) =>
    fetch(`${server.url}${url}`, {
      method: init.method ?? 'POST',
      headers: {
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.token ? { 'x-api-token': init.token } : {}),
        ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
        ...init.headers,
      },
      ...(init.body !== undefined ? { body: init.body } : {}),
      redirect: 'manual',
    });

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-logs-'));
    db = await createTestDatabase({ migrate: false });
    sim = await startGitHubSimulator({
      webhookSecret: SECRETS.githubWebhookSecret,
      token: SECRETS.githubToken,
    });
    await sim.createRepo(GH_REPO.owner, GH_REPO.name, {
      defaultBranch: 'main',
      files: { 'README.md': 'hi\n', '.mainline.yaml': 'merge:\n  required_statuses: [ci]\n' },
    });
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(500).end('receiver fails on purpose');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    server = await startServerProcess({
      ...db.env,
      LOG_LEVEL: 'trace',
      MAINLINE_GIT_ROOT: path.join(root, 'git'),
      MAINLINE_BOOTSTRAP_ORG: 'acme',
      MAINLINE_BOOTSTRAP_TOKEN: SECRETS.bootstrap,
      MAINLINE_GITHUB_TOKEN: SECRETS.githubToken,
      MAINLINE_GITHUB_WEBHOOK_SECRET: SECRETS.githubWebhookSecret,
      MAINLINE_GITHUB_API_URL: sim.url,
      MAINLINE_GITHUB_HOST: 'github.com',
      MAINLINE_METRICS_TOKEN: SECRETS.metricsToken,
      MAINLINE_WEBHOOK_POLL_MS: '100',
      MAINLINE_WEBHOOK_ALLOW_PRIVATE: '1', // its webhook receiver is on 127.0.0.1
      MAINLINE_QUEUE_POLL_MS: '200',
    });
    const created = await runCli(['token', 'create', '--org', 'acme', '--name', 'ci'], db.env);
    expect(created.code, created.stderr).toBe(0);
    issued['api token'] = created.stdout.trim();
    expect(issued['api token']).toMatch(/^ml_/);
    // The operator's grant (mainline github grant) that lets acme use its GitHub repositories.
    await grantOwner(db.database.db, { orgSlug: 'acme', host: 'github.com', owner: 'acme', now: Date.now() });
  });

  afterAll(async () => {
    if (server !== undefined) await server.stop();
    await sim?.close();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    await db?.cleanup();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('uses every secret (so the logs had the chance to show them)', async () => {
    const token = issued['api token']!;
    // API tokens: header, Bearer, the bootstrap token, an unknown one.
    expect(
      (await api('/v1/repositories/create', { token, body: JSON.stringify({ repo: REPO }) })).status,
    ).toBe(200);
    expect(
      (await api('/v1/repositories/list', { bearer: token, body: '{"page_query":{"page_size":5}}' })).status,
    ).toBe(200);
    expect(
      (await api('/v1/repositories/get', { token: SECRETS.bootstrap, body: JSON.stringify({ repo: REPO }) }))
        .status,
    ).toBe(200);
    expect(
      (
        await api('/v1/repositories/get', {
          token: SECRETS.unknownToken,
          body: JSON.stringify({ repo: REPO }),
        })
      ).status,
    ).toBe(401);
    expect((await api('/v1/repositories/get', { bearer: SECRETS.unknownToken, body: '{}' })).status).toBe(
      401,
    );
    // Tokens inside failing requests' bodies: invalid JSON, a validation error, an unknown field.
    expect(
      (await api('/v1/repositories/get', { token, body: `{"token": "${token}", "repo": ` })).status,
    ).toBe(400);
    expect((await api('/v1/repositories/get', { token, body: JSON.stringify({ repo: token }) })).status).toBe(
      400,
    );
    expect(
      (
        await api('/v1/repositories/get', {
          token,
          body: JSON.stringify({ repo: { ...REPO, name: token }, token }),
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await api('/v1/repositories/get', {
          token,
          body: 'x'.repeat(10) + token,
          headers: { 'content-type': 'text/plain' },
        })
      ).status,
    ).toBe(415);

    // An outgoing webhook (its secret is shown once), then an event for it; the receiver answers 500.
    const hook = await api('/v1/webhooks/create', {
      token,
      body: JSON.stringify({
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        events: ['test.status_changed'],
      }),
    });
    expect(hook.status).toBe(200);
    issued['webhook secret'] = ((await hook.json()) as { secret: string }).secret;
    for (const fail of [true, false]) {
      const body = multipart({ repo: REPO, org_url_slug: 'acme', branch: 'main', commit_sha: 'c0ffee' }, [
        { name: 'a.xml', content: junitXml([{ name: 'flips', fail: fail ? 'boom' : false }]) },
      ]);
      const res = await fetch(`${server.url}/v1/test-results/upload`, {
        method: 'POST',
        headers: { 'content-type': body.contentType, 'x-api-token': token },
        body: body.payload,
      });
      expect(res.status).toBe(200);
    }
    await until('the dispatcher to try the webhook', () => received.length > 0);
    const delivery = received[0]!;
    expect(delivery.headers['x-mainline-signature-256'], 'signed with the endpoint secret').toBe(
      `sha256=${createHmac('sha256', issued['webhook secret']!).update(delivery.body).digest('hex')}`,
    );
    await until('the failed delivery to be logged', () =>
      server.logs.some((l) => l.includes('webhook delivery')),
    );

    // GitHub: a queue on a GitHub repository (the forge calls the simulator with the token), then calls that fail.
    const queue = await api('/v1/createQueue', {
      token,
      body: JSON.stringify({ repo: GH_REPO, targetBranch: 'main' }),
    });
    expect(queue.status, await queue.text()).toBe(200);
    expect(
      sim.requests.some((r) => r.status === 200),
      'the simulator accepted the GitHub token',
    ).toBe(true);
    sim.faults.inject({
      path: '**',
      times: 20,
      response: { kind: 'error', status: 401, message: 'Bad credentials' },
    });
    const failing = await api('/v1/submitPullRequest', {
      token,
      body: JSON.stringify({ repo: GH_REPO, targetBranch: 'main', pr: { number: 1 } }),
    });
    expect(failing.status).toBeGreaterThanOrEqual(400);
    sim.faults.clear();

    // GitHub deliveries: signed with the secret, and badly signed.
    const payload = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    const sign = (key: string) => `sha256=${createHmac('sha256', key).update(payload).digest('hex')}`;
    const delivered = await api('/webhooks/github', {
      body: payload,
      headers: {
        'x-github-event': 'ping',
        'x-github-delivery': 'd-1',
        'x-hub-signature-256': sign(SECRETS.githubWebhookSecret),
      },
    });
    expect(delivered.status).toBe(202);
    const forged = await api('/webhooks/github', {
      body: payload,
      headers: { 'x-github-event': 'ping', 'x-github-delivery': 'd-2', 'x-hub-signature-256': sign('guess') },
    });
    expect(forged.status).toBe(401);

    // Metrics behind its token, right and wrong.
    expect((await api('/metrics', { method: 'GET', bearer: SECRETS.metricsToken })).status).toBe(200);
    expect((await api('/metrics', { method: 'GET', bearer: `${SECRETS.metricsToken}x` })).status).toBe(401);

    // The dashboard: sign in with the token in a form; the session cookie is a secret too.
    const login = await fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    issued['session cookie'] = cookie.slice(cookie.indexOf('=') + 1);
    expect(issued['session cookie']).not.toBe('');
    const page = await fetch(`${server.url}/acme`, { headers: { cookie }, redirect: 'manual' });
    expect(page.status).toBe(200);
    const wrongLogin = await fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: SECRETS.unknownToken }).toString(),
      redirect: 'manual',
    });
    expect(wrongLogin.status).toBe(401);
    lastRequestId = wrongLogin.headers.get('x-request-id') ?? '';
    expect(lastRequestId).not.toBe('');

    // Give the background tasks (queue runner, GitHub processor, dispatcher) a few passes to log.
    await new Promise((r) => setTimeout(r, 1_000));
  });

  it('prints none of them, while logging the requests and the failures', async () => {
    // Lines arrive through a pipe: wait for the last request's.
    await until('the log of the last request', () =>
      server.logs.some((l) => l.includes(lastRequestId) && l.includes('request completed')),
    );
    const logs = server.logs.join('\n');
    // The capture works: trace-level request logs, and the failures above were logged.
    expect(logs).toContain('incoming request');
    expect(logs).toContain('webhook delivery');
    expect(server.logs.length).toBeGreaterThan(30);
    const all = { ...SECRETS, ...issued };
    const found = Object.entries(all)
      .filter(([, value]) => value.length >= 16)
      .filter(([, value]) => logs.includes(value))
      .map(([name, value]) => `${name}: ${server.logs.find((l) => l.includes(value))?.slice(0, 600)}`);
    expect(found, 'secrets found in the server’s output').toEqual([]);
    expect(Object.keys(all)).toHaveLength(8);
  });

  it('prints no signature of a signed bundle-upload URL (the URL is the upload’s credential)', async () => {
    const token = issued['api token']!;
    const created = await api('/v1/metrics/createBundleUpload', {
      token,
      body: JSON.stringify({ repo: REPO, orgUrlSlug: 'acme' }),
    });
    expect(created.status).toBe(200);
    const url = new URL(((await created.json()) as { url: string }).url);
    bundleSignature = url.searchParams.get('signature') ?? '';
    expect(bundleSignature.length).toBeGreaterThanOrEqual(16);
    const put = await fetch(`${server.url}${url.pathname}${url.search}`, {
      method: 'PUT',
      body: 'not a bundle',
    });
    expect(put.status).toBe(415);
    await new Promise((r) => setTimeout(r, 200));
    const leaked = server.logs.filter((l) => l.includes(bundleSignature));
    expect(
      leaked.map((l) => l.slice(0, 300)),
      'log lines holding the upload URL’s signature',
    ).toEqual([]);
  });
});
