import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import {
  buildTar,
  concat,
  END_OF_ARCHIVE,
  tarHeader,
  zeroEntriesBomb,
  zstdStored,
} from '../support/bundles.ts';
import { storedTestNames } from '../support/reads.ts';
import { listRoutes, openApiOperations, routeKey } from '../support/routes.ts';
import { bundleMeta, putBundle } from '../support/seed.ts';
import { junitXml, multipart, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

/**
 * Hostile input at the HTTP level: what test/unit/junit-limits.test.ts and bundle-hostile.test.ts
 * check on the parsers, checked here through the real routes (multipart upload, signed bundle PUT),
 * plus body limits on every route, slow clients and the rate limit.
 */
const MiB = 1024 * 1024;
const META = { repo: REPO, org_url_slug: 'acme', branch: 'main', commit_sha: 'c0ffee' };
const GOOD = junitXml([{ name: 'still_ingested' }]);

type FileResult = { name: string; ok: boolean; problems: { severity: string; message: string }[] };

async function timed<T>(p: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await p;
  return { value, ms: performance.now() - started };
}

describe('hostile JUnit files through POST /v1/test-results/upload', () => {
  const t = useTestApp({ env: { MAINLINE_MAX_FILE_BYTES: String(3 * MiB) } });
  let listener: http.Server;
  let contacted = 0;

  beforeAll(async () => {
    // Where an external entity would point: the parser must never fetch it.
    listener = http.createServer((_req, res) => {
      contacted += 1;
      res.end('<!ENTITY x "pwned">');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  /** Uploads the hostile file next to a good one: the hostile one fails alone, the good one is ingested. */
  async function hostile(
    name: string,
    content: Buffer | string,
  ): Promise<{ bad: FileResult; body: string; ms: number }> {
    const { value: res, ms } = await timed(
      upload(t, t.orgToken, [
        { name, content },
        { name: 'good.xml', content: GOOD },
      ]),
    );
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    const files = res.json().files as FileResult[];
    expect(files.find((f) => f.name === 'good.xml')?.ok, 'the good file next to it').toBe(true);
    expect(res.json().counts.test_cases).toBe(1);
    const bad = files.find((f) => f.name === name);
    expect(bad, 'the hostile file has a result of its own').toBeDefined();
    expect(bad!.ok, `${name}: ${JSON.stringify(bad)}`).toBe(false);
    expect(bad!.problems.some((p) => p.severity === 'error')).toBe(true);
    return { bad: bad!, body: res.body, ms };
  }

  it('an entity bomb (billion laughs) is refused without expanding anything', async () => {
    const levels = Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`).join(
      '',
    );
    const xml = `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY l0 "lol">${levels}]><testsuite><testcase name="&l9;"/></testsuite>`;
    const { body, ms } = await hostile('laughs.xml', xml);
    expect(body.length).toBeLessThan(10_000);
    expect(body).not.toContain('lollol');
    expect(ms).toBeLessThan(5_000);
  });

  it('external entities (file and http) are never resolved', async () => {
    const port = (listener.address() as AddressInfo).port;
    for (const system of ['file:///etc/passwd', `http://127.0.0.1:${port}/entity`]) {
      const xml = `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "${system}">]><testsuite><testcase name="&x;"/></testsuite>`;
      const { body } = await hostile('xxe.xml', xml);
      expect(body).not.toContain('root:');
      expect(body).not.toContain('pwned');
    }
    const dtd = `<?xml version="1.0"?><!DOCTYPE t SYSTEM "http://127.0.0.1:${port}/t.dtd"><testsuite><testcase name="a"/></testsuite>`;
    await hostile('dtd.xml', dtd);
    const parameter = `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY % p SYSTEM "http://127.0.0.1:${port}/p">%p;]><testsuite/>`;
    await hostile('param.xml', parameter);
    expect(contacted, 'requests the parser made to the entity URL').toBe(0);
  });

  it('deep nesting is refused at the depth limit, quickly', async () => {
    const { ms } = await hostile('deep.xml', `<testsuites>${'<testsuite>'.repeat(200_000)}`);
    expect(ms).toBeLessThan(5_000);
  });

  it('a 2.5 MB attribute is refused (the file itself is under the size cap)', async () => {
    await hostile('attr.xml', `<testsuite><testcase name="${'a'.repeat(2_500_000)}"/></testsuite>`);
  });

  it('a gzip bomb is stopped at MAINLINE_MAX_FILE_BYTES after decompression, with a clear error', async () => {
    // Inside a root element: the parser accepts the spaces, so the decompression cap is what stops it
    // (a bomb without one is refused sooner, when the parser finds no root element).
    const bomb = gzipSync(Buffer.concat([Buffer.from('<testsuite>'), Buffer.alloc(256 * MiB, 0x20)]));
    expect(bomb.length).toBeLessThan(512 * 1024);
    const { bad, ms } = await hostile('bomb.xml.gz', bomb);
    expect(bad.problems.map((p) => p.message)).toContain(
      `the file is larger than ${3 * MiB} bytes (after decompression)`,
    );
    expect(ms).toBeLessThan(5_000);
  });

  it('a plain file over MAINLINE_MAX_FILE_BYTES gets a per-file error', async () => {
    const { bad } = await hostile('big.xml', `<testsuite>${' '.repeat(3 * MiB + 10)}</testsuite>`);
    expect(bad.problems[0]?.message).toMatch(/larger than 3145728 bytes/);
  });

  it('too many files are refused with 413, an oversized meta part with 400', async () => {
    const many = multipart(
      META,
      Array.from({ length: 1001 }, (_, i) => ({ name: `f${i}.xml`, content: GOOD })),
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/test-results/upload',
      headers: { 'content-type': many.contentType, 'x-api-token': t.orgToken },
      payload: many.payload,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    const big = await upload(t, t.orgToken, [{ name: 'a.xml', content: GOOD }], {
      branch: 'x'.repeat(3 * MiB),
    });
    expect(big.statusCode).toBe(400);
    expect(big.json().error.code).toMatch(/INVALID_JSON|VALIDATION_FAILED/);
  });
});

describe('hostile bundles through the signed PUT /v1/metrics/bundle-uploads/:id', () => {
  const t = useTestApp({ env: { MAINLINE_MAX_FILE_BYTES: String(MiB) } });

  async function signedUrl(): Promise<string> {
    const res = await t.post(
      '/v1/metrics/createBundleUpload',
      { repo: REPO, orgUrlSlug: 'acme' },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
    return res.json().url;
  }

  it('a zstd bomb is stopped at the 512 MiB total cap with 413, without reading it all', async () => {
    // 600 entries of 1 MiB (each at the per-file cap) = 600 MiB of output from ~1 MiB of input.
    const bomb = zeroEntriesBomb(600, MiB - 512, (i) => `junit/${i}`);
    expect(bomb.length).toBeLessThan(2 * MiB);
    const { value: res, ms } = await timed(putBundle(t, await signedUrl(), bomb));
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'The bundle could not be read: the bundle decompresses to more than 512 MiB',
    });
    expect(ms).toBeLessThan(20_000);
  });

  it('an entry over MAINLINE_MAX_FILE_BYTES is refused from its header, at once', async () => {
    const bomb = zeroEntriesBomb(1, 200 * MiB, () => 'junit/0');
    const { value: res, ms } = await timed(putBundle(t, await signedUrl(), bomb));
    expect(res.statusCode).toBe(413);
    expect(res.json().error.message).toMatch(/per-file limit is 1 MiB/);
    expect(ms).toBeLessThan(2_000);
  });

  it('a gzip bundle is held to the same caps', async () => {
    const tar = concat([tarHeader('junit/0', 2 * MiB), new Uint8Array(2 * MiB), END_OF_ARCHIVE]);
    const res = await putBundle(t, await signedUrl(), gzipSync(tar));
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error.message).toMatch(/per-file limit is 1 MiB/);
  });

  it('tar entries with absolute or .. paths, links and devices are skipped; nothing is written anywhere', async () => {
    const marker = `mainline-hostile-${randomBytes(6).toString('hex')}`;
    const outside = path.join(os.tmpdir(), marker);
    const good = junitXml([{ name: 'safe_test' }]);
    const evil = junitXml([{ name: 'evil_test' }]);
    const tar = await buildTar([
      { name: 'meta.json', data: bundleMeta(REPO, 1) },
      { name: 'junit/0', data: good },
      { name: `${outside}/abs.xml`, data: evil },
      { name: `junit/../../../../../../../..${outside}/dotdot.xml`, data: evil },
      { name: `../${marker}.xml`, data: evil },
      { name: 'junit/1', type: 'symlink', linkname: '/etc/passwd' },
      { name: 'junit/2', type: 'link', linkname: 'junit/0' },
      { name: 'junit/3', type: 'fifo' },
    ]);
    const res = await putBundle(t, await signedUrl(), zstdStored(tar));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().counts.test_cases).toBe(1);
    expect(res.body).not.toContain('evil_test');
    expect(res.body).not.toContain('root:');
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.existsSync(path.join(os.tmpdir(), `${marker}.xml`))).toBe(false);
    const names = await storedTestNames(t);
    expect(names).toContain('safe_test');
    expect(names).not.toContain('evil_test');
  });
});

describe('oversized bodies', () => {
  const LIMIT = 4096;
  const t = useTestApp({
    env: {
      MAINLINE_BODY_LIMIT: String(LIMIT),
      MAINLINE_GITHUB_TOKEN: 'ghp_unused',
      MAINLINE_GITHUB_WEBHOOK_SECRET: 'unused-secret',
      MAINLINE_GITHUB_API_URL: 'http://127.0.0.1:9/api/v3',
    },
  });
  let routes: ReturnType<typeof listRoutes>;

  beforeAll(() => {
    routes = listRoutes(t.app);
  });

  it('every JSON endpoint answers a body over MAINLINE_BODY_LIMIT with 413 in the envelope', async () => {
    const json = openApiOperations(t.app).filter((o) => o.body !== undefined);
    expect(json.length).toBeGreaterThan(20);
    const wrong: string[] = [];
    for (const op of json) {
      const res = await t.app.inject({
        method: op.method as 'POST',
        url: op.url,
        headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
        payload: JSON.stringify({ padding: 'x'.repeat(LIMIT * 2) }),
      });
      if (res.statusCode !== 413 || res.json().error?.code !== 'PAYLOAD_TOO_LARGE')
        wrong.push(`${routeKey(op)} → ${res.statusCode}`);
    }
    expect(wrong).toEqual([]);
  });

  it('GitHub deliveries over the limit get 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/webhooks/github',
      headers: { 'content-type': 'application/json' },
      payload: 'x'.repeat(LIMIT * 2),
    });
    expect(res.statusCode).toBe(413);
  });

  it('the dashboard’s forms over their limit get 413', async () => {
    expect(routes.map(routeKey)).toContain('POST /login');
    const res = await t.app.inject({
      method: 'POST',
      url: '/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${'x'.repeat(70 * 1024)}`,
    });
    expect(res.statusCode).toBe(413);
  });

  it('the uploader telemetry (no token) does not drain a body of any size: 413 over the limit', async () => {
    // Multipart uploads and bundle PUTs have their own caps (per file, files, total decompressed);
    // this route has none, needs no token and reads the body to the end.
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/flakytests-cli/upload-metrics',
      headers: { 'content-type': 'application/json' },
      payload: Buffer.alloc(LIMIT * 100, 0x20),
    });
    expect(res.statusCode).toBe(413);
  });
});

describe('slow clients on a listening socket', () => {
  const t = useTestApp();
  let port: number;

  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });

  it('a client sending its body byte by byte is answered once the body is complete', async () => {
    const body = JSON.stringify({ page_query: { page_size: 1 } });
    const head = [
      'POST /v1/repositories/list HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      `X-Api-Token: ${t.orgToken}`,
      `Content-Length: ${body.length}`,
      'Connection: close',
      '',
      '',
    ].join('\r\n');
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => {
        received += d.toString();
      });
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
      socket.write(head);
      let i = 0;
      const timer = setInterval(() => {
        if (i >= body.length) {
          clearInterval(timer);
          return;
        }
        socket.write(body[i]!);
        i += 1;
      }, 5);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('the server bounds how long a request may take to arrive (slowloris)', () => {
    // buildApp sets neither Fastify's requestTimeout nor connectionTimeout, and Fastify's default of
    // 0 replaces Node's 300 s: a client that sends its headers and then one byte a minute (or
    // nothing) holds its socket and request forever. headersTimeout (60 s) only covers the headers.
    const server = t.app.server;
    expect(server.requestTimeout, 'server.requestTimeout (0 = none)').toBeGreaterThan(0);
    expect(server.requestTimeout).toBeLessThanOrEqual(300_000);
  });
});

describe('the rate limit holds', () => {
  const t = useTestApp({
    env: { MAINLINE_RATE_LIMIT: '1', MAINLINE_RATE_LIMIT_BURST: '5' },
    now: () => 1_000_000,
  });

  it('under a burst of concurrent requests exactly the burst passes; every 429 carries Retry-After', async () => {
    const token = await t.token('acme');
    const answers = await Promise.all(
      Array.from({ length: 25 }, () =>
        t.post('/v1/repositories/list', { page_query: { page_size: 1 } }, token),
      ),
    );
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(5);
    const limited = answers.filter((r) => r.statusCode !== 200);
    expect(limited).toHaveLength(20);
    for (const r of limited) {
      expect(r.statusCode).toBe(429);
      expect(r.json().error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
  });

  it('one bucket per token whichever header carries it, on every kind of endpoint', async () => {
    const token = await t.token('acme');
    for (let i = 0; i < 5; i++) {
      const header = i % 2 === 0 ? { 'x-api-token': token } : { authorization: `Bearer ${token}` };
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/repositories/list',
        headers: { 'content-type': 'application/json', ...header },
        payload: '{"page_query":{"page_size":1}}',
      });
      expect(res.statusCode).toBe(200);
    }
    const body = multipart(META, [{ name: 'a.xml', content: GOOD }]);
    const uploadRes = await t.app.inject({
      method: 'POST',
      url: '/v1/test-results/upload',
      headers: { 'content-type': body.contentType, authorization: `Bearer ${token}` },
      payload: body.payload,
    });
    expect(uploadRes.statusCode).toBe(429);
    const metrics = await t.app.inject({
      method: 'GET',
      url: '/v1/getMergeQueueMetrics',
      headers: { 'x-api-token': token },
    });
    expect(metrics.statusCode).toBe(429);
  });

  it('requests with unknown tokens do not spend a real token’s bucket', async () => {
    const token = await t.token('acme');
    for (let i = 0; i < 20; i++) {
      const res = await t.post('/v1/repositories/list', { page_query: { page_size: 1 } }, `${token}x`);
      expect(res.statusCode).toBe(401);
    }
    expect((await t.post('/v1/repositories/list', { page_query: { page_size: 1 } }, token)).statusCode).toBe(
      200,
    );
  });
});
