// MAINLINE_INGEST_CONCURRENCY: uploads past the limit wait for a turn before their body is read (so
// a burst of large uploads cannot take all the memory), are then ingested in arrival order, and
// show in /metrics while they wait. A bundle PUT with a bad URL is refused without waiting.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { junitXml, multipart } from '../support/upload.ts';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

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

/** A POST whose body is sent in two halves: the second only when `finish` is called. */
function heldUpload(url: string, token: string, body: { payload: Buffer; contentType: string }) {
  const cut = body.payload.length - 50;
  const request = http.request(`${url}/v1/test-results/upload`, {
    method: 'POST',
    headers: {
      'x-api-token': token,
      'content-type': body.contentType,
      'content-length': body.payload.length,
    },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    request.on('error', reject);
  });
  request.write(body.payload.subarray(0, cut));
  return {
    answer,
    finish: () => request.end(body.payload.subarray(cut)),
  };
}

describe('ingest concurrency', () => {
  it('makes an upload past the limit wait for its turn, then ingests both in arrival order', async () => {
    t = await buildTestApp({ MAINLINE_INGEST_CONCURRENCY: '1' });
    const app = t;
    const token = await app.token('acme');
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const done: string[] = [];

    const first = heldUpload(
      url,
      token,
      multipart(meta('1111111'), [{ name: 'a.xml', content: junitXml([{ name: 'first' }]) }]),
    );
    const firstAnswer = first.answer.then((r) => {
      done.push('first');
      return r;
    });
    await until(async () => (await gauge(app, 'mainline_ingest_uploads_active')) === 1);

    const second = multipart(meta('2222222'), [
      { name: 'b.xml', content: junitXml([{ name: 'second', fail: 'boom' }]) },
    ]);
    const secondAnswer = fetch(`${url}/v1/test-results/upload`, {
      method: 'POST',
      headers: { 'x-api-token': token, 'content-type': second.contentType },
      body: second.payload,
    }).then(async (r) => {
      done.push('second');
      return { status: r.status, body: await r.text() };
    });
    await until(async () => (await gauge(app, 'mainline_ingest_uploads_waiting')) === 1);
    expect(done).toEqual([]);

    first.finish();
    const [a, b] = await Promise.all([firstAnswer, secondAnswer]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(done).toEqual(['first', 'second']);
    expect(JSON.parse(a.body).counts.test_cases).toBe(1);
    expect(JSON.parse(b.body).counts.failures).toBe(1);
    expect(await gauge(app, 'mainline_ingest_uploads_active')).toBe(0);
    expect(await gauge(app, 'mainline_ingest_uploads_waiting')).toBe(0);
  });

  it('refuses a bundle PUT to a bad URL at once, even while every turn is taken', async () => {
    t = await buildTestApp({ MAINLINE_INGEST_CONCURRENCY: '1' });
    const app = t;
    const token = await app.token('acme');
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const held = heldUpload(
      url,
      token,
      multipart(meta('3333333'), [{ name: 'a.xml', content: junitXml([{ name: 'held' }]) }]),
    );
    await until(async () => (await gauge(app, 'mainline_ingest_uploads_active')) === 1);

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
