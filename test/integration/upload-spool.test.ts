// Bodies being received (the multipart upload and the bundle PUT) keep their first MiB in memory and
// spill the rest to `<MAINLINE_DATA_DIR>/tmp` (src/lib/spool.ts): the file exists while the body
// arrives and is gone when the request ends, however it ends (answered, 413, 408, the client gone).
// A bundle PUT is bounded by MAINLINE_UPLOAD_LIMIT like the multipart upload. Through a real
// listening server on loopback, since slowness and aborted connections matter here.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { uploadCount } from '../support/reads.ts';
import { tenantBundle } from '../support/seed.ts';
import { junitXml, multipart } from '../support/upload.ts';

let t: TestApp | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (dataDir !== undefined) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

/** A server listening on loopback with a data directory of its own (on PostgreSQL too). */
async function listening(env: Record<string, string> = {}) {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mainline-spool-it-'));
  t = await buildTestApp({ MAINLINE_DATA_DIR: dataDir, ...env });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const tmp = path.join(dataDir, 'tmp');
  return {
    app: t,
    url: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`,
    /** The spool files there now. */
    files: () => (fs.existsSync(tmp) ? fs.readdirSync(tmp) : []),
  };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

interface Answer {
  status: number;
  body: string;
}

/**
 * A request whose body is written as `parts`, without ending it unless `end`; without a
 * `content-length` header it is sent chunked. Write errors after the answer (the server closed the
 * connection without reading the rest) are ignored.
 */
function send(
  method: string,
  target: string,
  headers: Record<string, string | number>,
  parts: Buffer[],
  end: boolean,
) {
  const request = http.request(target, { method, headers });
  let answered = false;
  const answer = new Promise<Answer>((resolve, reject) => {
    request.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    request.on('error', (error) => {
      if (!answered) reject(error);
    });
  });
  // The headers go at once, even with no body written yet.
  request.flushHeaders();
  for (const part of parts) request.write(part);
  if (end) request.end();
  return { request, answer };
}

/** A multipart upload written but for its last 100 bytes, which are never sent. */
function heldBackUpload(url: string, token: string, body: { payload: Buffer; contentType: string }) {
  return send(
    'POST',
    `${url}/v1/test-results/upload`,
    { 'x-api-token': token, 'content-type': body.contentType, 'content-length': body.payload.length },
    [body.payload.subarray(0, body.payload.length - 100)],
    false,
  );
}

/** A bundle PUT to `target` written but for its last 100 bytes, which are never sent. */
function heldBackPut(target: string, bundle: Buffer) {
  return send(
    'PUT',
    target,
    { 'content-type': 'application/octet-stream', 'content-length': bundle.length },
    [bundle.subarray(0, bundle.length - 100)],
    false,
  );
}

/** A one-test file padded with `padding` spaces: 1.5 MiB spills past the spool's 1 MiB in memory. */
function padded(name: string, padding = 1.5 * 1024 * 1024): string {
  return junitXml([{ name }]).replace('<testsuites>', `<testsuites>${' '.repeat(padding)}`);
}

const meta = (sha: string) => ({ repo: REPO, org_url_slug: 'acme', branch: 'main', commit_sha: sha });

async function signedPut(app: TestApp, url: string, token: string): Promise<string> {
  const res = await app.post('/v1/metrics/createBundleUpload', { repo: REPO, orgUrlSlug: 'acme' }, token);
  expect(res.statusCode, res.body).toBe(200);
  const signed = new URL(res.json().url);
  return `${url}${signed.pathname}${signed.search}`;
}

describe('bodies being received are spooled to a file, removed when the request ends', () => {
  it('holds a large multipart upload in a file while it arrives, and removes it once answered', async () => {
    const { app, url, files } = await listening();
    const token = await app.token('acme');
    const body = multipart(meta('1111111'), [{ name: 'a.xml', content: padded('big_upload') }]);
    const cut = body.payload.length - 100;
    const upload = send(
      'POST',
      `${url}/v1/test-results/upload`,
      { 'x-api-token': token, 'content-type': body.contentType, 'content-length': body.payload.length },
      [body.payload.subarray(0, cut)],
      false,
    );
    await until(() => files().length === 1);
    upload.request.end(body.payload.subarray(cut));
    const res = await upload.answer;
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body).counts.test_cases).toBe(1);
    expect(files()).toEqual([]);
  });

  it('holds a large bundle in a file while it arrives, and removes it once answered', async () => {
    const { app, url, files } = await listening();
    const token = await app.token('acme');
    const bundle = Buffer.from(await tenantBundle(REPO, [padded('big_bundle')]));
    const cut = bundle.length - 100;
    const put = send(
      'PUT',
      await signedPut(app, url, token),
      { 'content-type': 'application/octet-stream', 'content-length': bundle.length },
      [bundle.subarray(0, cut)],
      false,
    );
    await until(() => files().length === 1);
    put.request.end(bundle.subarray(cut));
    const res = await put.answer;
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body).counts.test_cases).toBe(1);
    expect(files()).toEqual([]);
  });

  it('answers a bundle PUT over MAINLINE_UPLOAD_LIMIT with 413, by Content-Length or as it arrives, and keeps nothing', async () => {
    const limit = 1536 * 1024;
    const { app, url, files } = await listening({ MAINLINE_UPLOAD_LIMIT: String(limit) });
    const token = await app.token('acme');
    const target = await signedPut(app, url, token);
    const bundle = Buffer.from(await tenantBundle(REPO, [padded('too_big', 2 * 1024 * 1024)]));
    expect(bundle.length).toBeGreaterThan(limit);

    // Refused from its Content-Length, before any of it is read.
    const declared = send(
      'PUT',
      target,
      { 'content-type': 'application/octet-stream', 'content-length': bundle.length },
      [],
      false,
    );
    const first = await declared.answer;
    declared.request.destroy();
    expect(first.status, first.body).toBe(413);
    expect(JSON.parse(first.body).error).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: expect.stringContaining(`MAINLINE_UPLOAD_LIMIT (${limit} bytes`),
    });

    // Chunked: refused once past the limit, after part of it was spooled.
    const chunked = send('PUT', target, { 'content-type': 'application/octet-stream' }, [bundle], true);
    const second = await chunked.answer;
    expect(second.status, second.body).toBe(413);
    expect(JSON.parse(second.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    await until(() => files().length === 0);
    expect(await uploadCount(app)).toBe(0);

    // The URL was given back: a bundle within the limit is then stored.
    const small = Buffer.from(await tenantBundle(REPO, [junitXml([{ name: 'fits' }])]));
    const ok = await send('PUT', target, { 'content-length': small.length }, [small], true).answer;
    expect(ok.status, ok.body).toBe(200);
    expect(await uploadCount(app)).toBe(1);
  });

  it('removes the file of a multipart upload refused with 413 as it arrives', async () => {
    const limit = 1536 * 1024;
    const { app, url, files } = await listening({ MAINLINE_UPLOAD_LIMIT: String(limit) });
    const token = await app.token('acme');
    const body = multipart(meta('2222222'), [{ name: 'a.xml', content: padded('too_big', 2 * 1024 * 1024) }]);
    const res = await send(
      'POST',
      `${url}/v1/test-results/upload`,
      { 'x-api-token': token, 'content-type': body.contentType },
      [body.payload],
      true,
    ).answer;
    expect(res.status, res.body).toBe(413);
    await until(() => files().length === 0);
    expect(await uploadCount(app)).toBe(0);
  });

  it('removes the file of an upload and of a bundle cut with 408 when they stall', async () => {
    const { app, url, files } = await listening({ MAINLINE_BODY_STALL_SECONDS: '1' });
    const token = await app.token('acme');
    const body = multipart(meta('3333333'), [{ name: 'a.xml', content: padded('stalled') }]);
    const upload = heldBackUpload(url, token, body);
    await until(() => files().length === 1);
    const cut = await upload.answer;
    upload.request.destroy();
    expect(cut.status, cut.body).toBe(408);
    await until(() => files().length === 0);

    const bundle = Buffer.from(await tenantBundle(REPO, [padded('stalled_bundle')]));
    const put = heldBackPut(await signedPut(app, url, token), bundle);
    await until(() => files().length === 1);
    const cutPut = await put.answer;
    put.request.destroy();
    expect(cutPut.status, cutPut.body).toBe(408);
    await until(() => files().length === 0);
    expect(await uploadCount(app)).toBe(0);
  });

  it('removes the file of an upload and of a bundle whose client goes away mid-body', async () => {
    const { app, url, files } = await listening();
    const token = await app.token('acme');
    const body = multipart(meta('4444444'), [{ name: 'a.xml', content: padded('aborted') }]);
    const upload = heldBackUpload(url, token, body);
    upload.answer.catch(() => {});
    await until(() => files().length === 1);
    upload.request.destroy();
    await until(() => files().length === 0);

    const bundle = Buffer.from(await tenantBundle(REPO, [padded('aborted_bundle')]));
    const target = await signedPut(app, url, token);
    const put = heldBackPut(target, bundle);
    put.answer.catch(() => {});
    await until(() => files().length === 1);
    put.request.destroy();
    await until(() => files().length === 0);
    expect(await uploadCount(app)).toBe(0);

    // The server goes on, and the bundle URL was given back.
    const again = await send('PUT', target, { 'content-length': bundle.length }, [bundle], true).answer;
    expect(again.status, again.body).toBe(200);
  });
});
