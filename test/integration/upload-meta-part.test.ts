// The `meta` part of a multipart upload (docs/upload-contract.md): a form field sent with
// `Content-Type: application/json` (as `curl -F 'meta=…;type=application/json'` sends it) is read like
// one sent as text, and a refused meta is answered once the whole body has arrived, so a client still
// sending its files reads the 400 instead of losing the connection under it. Through a real listening
// server on loopback where the connection matters.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { uploadRows } from '../support/reads.ts';
import { junitXml } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const META = { repo: REPO, org_url_slug: 'acme', branch: 'main', commit_sha: 'c0ffee' };

const t = useTestApp({ perTest: true });

/** A multipart body whose meta part is sent as given (its text and Content-Type, if any), then junit files. */
function body(meta: string, metaType: string | undefined, files: readonly (string | Buffer)[]) {
  const boundary = `----mainline${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="meta"\r\n${metaType === undefined ? '' : `Content-Type: ${metaType}\r\n`}\r\n${meta}\r\n`,
    ),
  ];
  files.forEach((content, i) => {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="junit"; filename="report-${i}.xml"\r\nContent-Type: application/xml\r\n\r\n`,
      ),
      Buffer.isBuffer(content) ? content : Buffer.from(content),
      Buffer.from('\r\n'),
    );
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

interface Sent {
  status: number;
  body: string;
  /** Errors the client saw on its request (a reset connection, a write after the server closed). */
  errors: string[];
  /** Whether the client had written all of its body when the answer arrived. */
  writtenBeforeAnswer: boolean;
}

/**
 * POSTs `payload` with its Content-Length in 64 KiB writes, each after the previous one drained, as
 * a client sending a large file does; settles once the answer has been read and the body written, or
 * when the request fails.
 */
function sendLarge(url: string, headers: Record<string, string>, payload: Buffer): Promise<Sent> {
  return new Promise((resolve) => {
    const errors: string[] = [];
    let written = false;
    let answer: { status: number; body: string; writtenBeforeAnswer: boolean } | undefined;
    const settle = () => {
      if (answer !== undefined && (written || errors.length > 0)) resolve({ ...answer, errors });
    };
    const request = http.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(payload.length) },
      agent: false,
    });
    request.on('response', (res) => {
      const writtenBeforeAnswer = written;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        answer = { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), writtenBeforeAnswer };
        settle();
        // Answered early: a server that no longer reads the body never lets the client finish it.
        setTimeout(() => {
          if (written || errors.length > 0) return;
          errors.push('the body could not be written within 5 s of the answer');
          request.destroy();
          settle();
        }, 5_000).unref();
      });
    });
    request.on('error', (error) => {
      errors.push((error as NodeJS.ErrnoException).code ?? error.message);
      // A request that fails before its answer arrives has none to wait for.
      if (answer === undefined) resolve({ status: 0, body: '', errors, writtenBeforeAnswer: false });
      else settle();
    });
    void (async () => {
      for (let at = 0; at < payload.length && errors.length === 0; at += 64 * 1024) {
        // once() rejects when the request fails: the loop then stops.
        if (!request.write(payload.subarray(at, at + 64 * 1024)))
          await once(request, 'drain').catch(() => undefined);
      }
      request.end(() => {
        written = true;
        settle();
      });
    })();
  });
}

describe('the meta part of a multipart upload', () => {
  it('is read when sent as a form field with Content-Type: application/json', async () => {
    for (const [type, branch] of [
      ['application/json', 'json-field'],
      ['application/json; charset=utf-8', 'json-field-utf8'],
    ] as const) {
      const b = body(JSON.stringify({ ...META, branch }), type, [junitXml([{ name: 'a' }])]);
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/test-results/upload',
        headers: { 'x-api-token': t.orgToken, 'content-type': b.contentType },
        payload: b.payload,
      });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(200);
      expect(res.json().counts).toMatchObject({ files: 1, test_cases: 1 });
    }
    expect((await uploadRows(t)).map((u) => u.branch).sort()).toEqual(['json-field', 'json-field-utf8']);
  });

  it('refuses one sent as application/json that is not the meta object with the same 400 as a text field', async () => {
    const send = async (meta: string, type: string | undefined) => {
      const b = body(meta, type, [junitXml([{ name: 'a' }])]);
      return t.app.inject({
        method: 'POST',
        url: '/v1/test-results/upload',
        headers: { 'x-api-token': t.orgToken, 'content-type': b.contentType },
        payload: b.payload,
      });
    };
    const noCommit = { repo: REPO, org_url_slug: 'acme', branch: 'main' };
    for (const type of [undefined, 'application/json']) {
      const missing = await send(JSON.stringify(noCommit), type);
      expect(missing.statusCode, missing.body).toBe(400);
      expect(missing.json().error.code).toBe('VALIDATION_FAILED');
      expect(missing.json().error.message).toContain('commit_sha');
      // A JSON string holding the meta's text is a string, not the meta (it is not parsed twice).
      const string = await send(JSON.stringify(JSON.stringify(META)), type);
      expect(string.statusCode, string.body).toBe(400);
      expect(string.json().error.code).toBe('VALIDATION_FAILED');
    }
    for (const type of [undefined, 'application/json']) {
      const broken = await send('{"repo": ', type);
      expect(broken.statusCode, broken.body).toBe(400);
      expect(broken.json().error.code).toBe('INVALID_JSON');
      expect(broken.json().error.message).toMatch(/not valid JSON/);
    }
    expect(await uploadRows(t)).toEqual([]);
  });

  it('answers a bad meta followed by a large file once the body has arrived, without resetting the connection', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/test-results/upload`;
    // 24 MiB after the meta: far more than the socket buffers hold, so the client is still sending
    // when the meta is read.
    const large = junitXml([{ name: 'big' }]).replace(
      '<testsuites>',
      `<testsuites>${' '.repeat(24 * 1024 * 1024)}`,
    );
    for (const [meta, type] of [
      [JSON.stringify({ ...META, repo: 'acme/web' }), undefined],
      [JSON.stringify({ ...META, repo: 'acme/web' }), 'application/json'],
      ['{"repo": ', undefined],
    ] as const) {
      const b = body(meta, type, [large]);
      const res = await sendLarge(
        url,
        { 'x-api-token': t.orgToken, 'content-type': b.contentType },
        b.payload,
      );
      expect(res.errors, `${meta} (${type}): the client's request failed`).toEqual([]);
      expect(res.status, res.body).toBe(400);
      expect(['VALIDATION_FAILED', 'INVALID_JSON']).toContain(JSON.parse(res.body).error.code);
      expect(res.writtenBeforeAnswer, 'answered before the body was read').toBe(true);
    }
    expect(await uploadRows(t)).toEqual([]);
    // A good one on the same server still goes through.
    const ok = body(JSON.stringify(META), 'application/json', [junitXml([{ name: 'a' }])]);
    const res = await sendLarge(
      url,
      { 'x-api-token': t.orgToken, 'content-type': ok.contentType },
      ok.payload,
    );
    expect(res.status, res.body).toBe(200);
  }, 60_000);
});
