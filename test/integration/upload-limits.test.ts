// Bounded work per multipart upload: a gzip file stops being inflated once the parser rejects it,
// MAINLINE_UPLOAD_LIMIT bounds the whole request (as sent, and its files after decompression) with
// 413, and its default still admits the largest real reports.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, REPO, type TestApp } from '../support/app.ts';
import { uploadCount } from '../support/reads.ts';
import { junitXml, multipart, upload } from '../support/upload.ts';

const MiB = 1024 * 1024;
const GOOD = junitXml([{ name: 'still_ingested' }]);
const META = { repo: REPO, org_url_slug: 'acme', branch: 'main', commit_sha: 'c0ffee' };

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The parser's work so far: bytes of JUnit files it was handed, after decompression. */
async function parsedBytes(app: TestApp): Promise<number> {
  const res = await app.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith('mainline_ingest_parsed_bytes_total '));
  return Number(line?.split(' ')[1]);
}

/**
 * A one-test file whose root element holds `padding` spaces (in runs of at most 1 MiB between empty
 * comments, since one text node may not be that long): big, valid, quick to parse.
 */
function padded(name: string, padding: number): Buffer {
  const xml = junitXml([{ name }]);
  const at = xml.indexOf('<testsuites>') + '<testsuites>'.length;
  const parts = [Buffer.from(xml.slice(0, at))];
  for (let left = padding; left > 0; left -= MiB) {
    parts.push(Buffer.alloc(Math.min(MiB, left), 0x20), Buffer.from('<!---->'));
  }
  parts.push(Buffer.from(xml.slice(at)));
  return Buffer.concat(parts);
}

describe('bounded work per upload', () => {
  it('stops inflating a gzip file as soon as the parser rejects it; the other files still ingest', async () => {
    t = await buildTestApp();
    const token = await t.token('acme');
    // A malformed first member, then 100 members of 1 MiB of zeros each: 100 MiB to inflate.
    const zeros = gzipSync(Buffer.alloc(MiB));
    const file = Buffer.concat([
      gzipSync('<testsuite><testcase name="a"></testsuite>'),
      ...Array.from({ length: 100 }, () => zeros),
    ]);
    const before = await parsedBytes(t);
    const res = await upload(t, token, [
      { name: 'rejected.xml.gz', content: file },
      { name: 'good.xml', content: GOOD },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const files = res.json().files as { name: string; ok: boolean; problems: { message: string }[] }[];
    expect(files.map((f) => [f.name, f.ok])).toEqual([
      ['rejected.xml.gz', false],
      ['good.xml', true],
    ]);
    expect(files[0]?.problems[0]?.message).toMatch(/^malformed XML/);
    expect(res.json().counts.test_cases).toBe(1);
    // What the parser was handed: the rejected file's first chunks and the good file, not 100 MiB.
    const parsed = (await parsedBytes(t)) - before;
    expect(parsed).toBeGreaterThan(0);
    expect(parsed).toBeLessThan(2 * MiB);
  });

  it('answers 413 naming MAINLINE_UPLOAD_LIMIT for an upload larger than it as sent; nothing is stored', async () => {
    t = await buildTestApp({ MAINLINE_UPLOAD_LIMIT: String(64 * 1024) });
    const token = await t.token('acme');
    const res = await upload(t, token, [
      { name: 'big.xml', content: padded('big', 100 * 1024) },
      { name: 'good.xml', content: GOOD },
    ]);
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.json().error.message).toContain('MAINLINE_UPLOAD_LIMIT (65536 bytes');
    expect(await uploadCount(t)).toBe(0);
  });

  it('counts a body sent without Content-Length (chunked) as it arrives: 413 past the limit', async () => {
    t = await buildTestApp({ MAINLINE_UPLOAD_LIMIT: String(64 * 1024) });
    const app = t;
    const token = await app.token('acme');
    await app.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.app.server.address() as AddressInfo).port;
    const body = multipart(META, [
      { name: 'a.xml', content: padded('a', 40 * 1024) },
      { name: 'b.xml', content: padded('b', 40 * 1024) },
    ]);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(`http://127.0.0.1:${port}/v1/test-results/upload`, {
        method: 'POST',
        headers: { 'x-api-token': token, 'content-type': body.contentType, 'transfer-encoding': 'chunked' },
      });
      request.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      // The server may close the connection before all of the body is written.
      request.on('error', (error) => (error.message.includes('EPIPE') ? undefined : reject(error)));
      for (let at = 0; at < body.payload.length; at += 8192)
        request.write(body.payload.subarray(at, at + 8192));
      request.end();
    });
    expect(answer.status, answer.body).toBe(413);
    expect(JSON.parse(answer.body).error.message).toContain('MAINLINE_UPLOAD_LIMIT');
    expect(await uploadCount(app)).toBe(0);
  });

  it('holds the files to the limit together after decompression: 413 for small gzip files that inflate past it', async () => {
    t = await buildTestApp({ MAINLINE_UPLOAD_LIMIT: String(64 * 1024) });
    const token = await t.token('acme');
    const res = await upload(t, token, [
      { name: 'a.xml.gz', content: gzipSync(padded('a', 40 * 1024)) },
      { name: 'b.xml.gz', content: gzipSync(padded('b', 40 * 1024)) },
    ]);
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error.message).toContain('MAINLINE_UPLOAD_LIMIT');
    expect(await uploadCount(t)).toBe(0);
    // Each alone is within it.
    const one = await upload(t, token, [{ name: 'a.xml.gz', content: gzipSync(padded('a', 40 * 1024)) }]);
    expect(one.statusCode, one.body).toBe(200);
  });

  it('accepts a 52 MB report under the defaults (MAINLINE_BODY_LIMIT does not apply to uploads; MAINLINE_UPLOAD_LIMIT is 256 MiB)', async () => {
    t = await buildTestApp();
    const token = await t.token('acme');
    expect(t.config.uploadLimitBytes).toBe(256 * MiB);
    const file = padded('large_report', 52_000_000);
    expect(file.length).toBeGreaterThan(t.config.bodyLimitBytes);
    const res = await upload(t, token, [{ name: 'large.xml', content: file }]);
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    expect(res.json().files[0].ok, JSON.stringify(res.json().files[0])).toBe(true);
    expect(res.json().counts.test_cases).toBe(1);
  }, 60_000);
});
