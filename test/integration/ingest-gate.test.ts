// MAINLINE_INGEST_CONCURRENCY: an upload takes a turn at the parser only once its body has arrived,
// turns are shared fairly between organizations (test/unit/ingest-gate.test.ts), and a body that
// stops arriving is cut with 408 after MAINLINE_BODY_STALL_SECONDS, on the multipart upload and the
// bundle PUT alike. A bundle PUT with a bad URL is refused without waiting.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { answerOf, type HttpAnswer } from '../support/http-answer.ts';
import { uploadCount } from '../support/reads.ts';
import { tenantBundle } from '../support/seed.ts';
import { junitXml, multipart } from '../support/upload.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const GOOD = junitXml([{ name: 'good' }]);

function meta(sha: string) {
  return { repo: REPO, org_url_slug: 'acme', branch: 'main', commit_sha: sha };
}

async function gauge(app: TestApp, name: string): Promise<number> {
  const res = await app.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** Polls until `check` holds (no fixed delays: the state it waits for always comes). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A POST whose body is sent but its last `keepBack` bytes: those only when `finish` is called. */
function heldUpload(
  url: string,
  token: string,
  body: { payload: Buffer; contentType: string },
  keepBack = 50,
) {
  return heldRequest(
    'POST',
    `${url}/v1/test-results/upload`,
    { 'x-api-token': token, 'content-type': body.contentType },
    body.payload,
    keepBack,
  );
}

/** A request whose body is sent but its last `keepBack` bytes: those only when `finish` is called. */
function heldRequest(
  method: string,
  target: string,
  headers: Record<string, string>,
  payload: Buffer,
  keepBack = 50,
) {
  const body = { payload };
  const cut = body.payload.length - keepBack;
  const request = http.request(target, {
    method,
    headers: { ...headers, 'content-length': body.payload.length },
  });
  const answer = answerOf(request);
  request.write(body.payload.subarray(0, cut));
  return {
    request,
    answer,
    finish: () => request.end(body.payload.subarray(cut)),
  };
}

/** A POST whose body is sent up to `keepBack` bytes before its end, then one byte every 50 ms. */
function tricklingUpload(url: string, token: string, body: { payload: Buffer; contentType: string }) {
  return trickling(heldUpload(url, token, body, TRICKLED), body.payload);
}

/** A bundle PUT to a signed URL whose body trickles as tricklingUpload's does. */
function tricklingPut(url: string, signedUrl: string, bundle: Uint8Array) {
  const put = new URL(signedUrl);
  const payload = Buffer.from(bundle);
  return trickling(
    heldRequest(
      'PUT',
      `${url}${put.pathname}${put.search}`,
      { 'content-type': 'application/octet-stream' },
      payload,
      TRICKLED,
    ),
    payload,
  );
}

const TRICKLED = 4000;

type Trickling = ReturnType<typeof trickling>;

function trickling(held: ReturnType<typeof heldRequest>, payload: Buffer) {
  const body = { payload };
  let at = body.payload.length - TRICKLED;
  let trickled = 0;
  const timer = setInterval(() => {
    if (at >= body.payload.length - 1) return;
    held.request.write(body.payload.subarray(at, at + 1));
    at += 1;
    trickled += 1;
  }, 50);
  return {
    answer: held.answer,
    trickled: () => trickled,
    finish: () => {
      clearInterval(timer);
      held.request.end(body.payload.subarray(at));
    },
  };
}

/** A one-test file padded with `padding` spaces inside its root element. */
function padded(name: string, padding: number): string {
  return junitXml([{ name }]).replace('<testsuites>', `<testsuites>${' '.repeat(padding)}`);
}

async function listening(env: Record<string, string> = {}): Promise<{ app: TestApp; url: string }> {
  t = await buildTestApp(env);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  return { app: t, url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
}

function post(url: string, token: string, body: { payload: Buffer; contentType: string }) {
  return fetch(`${url}/v1/test-results/upload`, {
    method: 'POST',
    headers: { 'x-api-token': token, 'content-type': body.contentType },
    body: body.payload,
  }).then(async (r) => ({ status: r.status, body: await r.text() }));
}

/** Organization `other`'s upload of one failing test, sent whole. */
function postFailingOfOther(url: string, token: string, sha: string) {
  return post(
    url,
    token,
    multipart({ repo: REPO, org_url_slug: 'other', branch: 'main', commit_sha: sha }, [
      { name: 'b.xml', content: junitXml([{ name: 'fast', fail: 'boom' }]) },
    ]),
  );
}

/** The answers of the slow requests, each pushing A0, A1, … to `done` when it comes. */
function recordAnswers(slow: Trickling[], done: string[]): Promise<HttpAnswer>[] {
  return slow.map((u, i) =>
    u.answer.then((r) => {
      done.push(`A${i}`);
      return r;
    }),
  );
}

/** Sends the rest of the slow bodies: each is then answered 200 with its one test, and no turn is held. */
async function finishSlow(app: TestApp, slow: Trickling[], answered: Promise<HttpAnswer>[]): Promise<void> {
  for (const u of slow) u.finish();
  const answers = await Promise.all(answered);
  expect(answers.map((a) => a.status)).toEqual([200, 200]);
  expect(answers.map((a) => JSON.parse(a.body).counts.test_cases)).toEqual([1, 1]);
  expect(await gauge(app, 'mainline_ingest_uploads_active')).toBe(0);
}

describe('ingest turns and slow clients', () => {
  it('two uploads of one organization trickling in do not delay another organization’s upload', async () => {
    const { app, url } = await listening();
    expect(app.config.ingestConcurrency).toBe(2);
    const tokenA = await app.token('acme');
    const tokenB = await app.token('other');
    const done: string[] = [];
    const slow = ['1111111', '2222222'].map((sha, i) =>
      tricklingUpload(
        url,
        tokenA,
        multipart(meta(sha), [{ name: 'a.xml', content: padded(`slow${i}`, 8000) }]),
      ),
    );
    const slowAnswers = recordAnswers(slow, done);
    // Both are sending (a byte at a time) before B uploads, and hold no turn meanwhile.
    await until(async () => slow.every((u) => u.trickled() >= 10));
    expect(await gauge(app, 'mainline_ingest_uploads_active')).toBe(0);

    const b = await postFailingOfOther(url, tokenB, '3333333');
    done.push('B');
    expect(b.status, b.body).toBe(200);
    expect(JSON.parse(b.body).counts.failures).toBe(1);
    // B was answered while A's were still arriving.
    expect(done).toEqual(['B']);

    await finishSlow(app, slow, slowAnswers);
  }, 30_000);

  it('two bundle PUTs of one organization trickling in delay neither another organization’s upload nor its bundle PUT', async () => {
    const { app, url } = await listening();
    expect(app.config.ingestConcurrency).toBe(2);
    const tokenA = await app.token('acme');
    const tokenB = await app.token('other');
    const signedUrl = async (token: string, org: string) => {
      const res = await app.post('/v1/metrics/createBundleUpload', { repo: REPO, orgUrlSlug: org }, token);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().url as string;
    };
    const done: string[] = [];
    const slow = await Promise.all(
      [0, 1].map(async (i) =>
        tricklingPut(
          url,
          await signedUrl(tokenA, 'acme'),
          await tenantBundle(REPO, [padded(`slow_bundle${i}`, 8000)]),
        ),
      ),
    );
    const slowAnswers = recordAnswers(slow, done);
    // Both are sending (a byte at a time) and hold their URL's claim, but no ingest turn.
    await until(async () => slow.every((u) => u.trickled() >= 10));
    expect(await gauge(app, 'mainline_ingest_uploads_active')).toBe(0);
    expect(await gauge(app, 'mainline_ingest_uploads_waiting')).toBe(0);

    const b = await postFailingOfOther(url, tokenB, '6666666');
    done.push('B upload');
    expect(b.status, b.body).toBe(200);
    const put = new URL(await signedUrl(tokenB, 'other'));
    const bBundle = await fetch(`${url}${put.pathname}${put.search}`, {
      method: 'PUT',
      body: Buffer.from(await tenantBundle(REPO, [junitXml([{ name: 'fast_bundle', fail: 'boom' }])])),
    });
    done.push('B bundle');
    expect(bBundle.status, await bBundle.clone().text()).toBe(200);
    expect(((await bBundle.json()) as { counts: { failures: number } }).counts.failures).toBe(1);
    // B's upload and bundle were answered while A's bundles were still arriving.
    expect(done).toEqual(['B upload', 'B bundle']);
    expect(slow.every((u) => u.trickled() >= 10)).toBe(true);

    await finishSlow(app, slow, slowAnswers);
  }, 30_000);

  it('cuts an upload whose body stops arriving with 408 after MAINLINE_BODY_STALL_SECONDS', async () => {
    const { app, url } = await listening({ MAINLINE_BODY_STALL_SECONDS: '1' });
    const token = await app.token('acme');
    const stalled = heldUpload(
      url,
      token,
      multipart(meta('4444444'), [{ name: 'a.xml', content: junitXml([{ name: 'never' }]) }]),
    );
    const res = await stalled.answer;
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body).error).toEqual({
      code: 'REQUEST_TIMEOUT',
      message: expect.stringContaining('MAINLINE_BODY_STALL_SECONDS'),
    });
    expect(await gauge(app, 'mainline_ingest_uploads_active')).toBe(0);
    expect(await uploadCount(app)).toBe(0);
    // The server goes on answering uploads.
    const next = await post(url, token, multipart(meta('5555555'), [{ name: 'b.xml', content: GOOD }]));
    expect(next.status, next.body).toBe(200);
  }, 30_000);

  it('cuts a bundle PUT whose body stops arriving with 408 too', async () => {
    const { app, url } = await listening({ MAINLINE_BODY_STALL_SECONDS: '1' });
    const token = await app.token('acme');
    const created = await app.post(
      '/v1/metrics/createBundleUpload',
      { repo: REPO, orgUrlSlug: 'acme' },
      token,
    );
    expect(created.statusCode).toBe(200);
    const put = new URL(created.json().url);
    const request = http.request(`${url}${put.pathname}${put.search}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': 100_000 },
    });
    const answer = answerOf(request);
    // A zstd frame's magic, then nothing more.
    request.write(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]));
    const res = await answer;
    expect(res.status, res.body).toBe(408);
    expect(JSON.parse(res.body).error.code).toBe('REQUEST_TIMEOUT');
    request.destroy();
  }, 30_000);

  it('refuses a bundle PUT to a bad URL at once, while an upload is arriving', async () => {
    const { app, url } = await listening();
    const token = await app.token('acme');
    const held = heldUpload(
      url,
      token,
      multipart(meta('3333333'), [{ name: 'a.xml', content: junitXml([{ name: 'held' }]) }]),
    );
    const res = await fetch(
      `${url}/v1/metrics/bundle-uploads/00000000-0000-4000-8000-000000000000?expires=9999999999999&signature=forged`,
      { method: 'PUT', body: 'not a bundle' },
    );
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('not valid');
    expect(await gauge(app, 'mainline_ingest_uploads_waiting')).toBe(0);

    held.finish();
    expect((await held.answer).status).toBe(200);
  });
});
