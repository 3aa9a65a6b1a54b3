import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError, postUpload } from '../../src/cli/client.ts';

const META = {
  repo: { host: 'github.com', owner: 'acme', name: 'web' },
  org_url_slug: 'acme',
  branch: 'main',
  commit_sha: 'abc1234',
};
const FILES = [{ name: 'r.xml', body: Buffer.from('<testsuite name="s"><testcase name="t"/></testsuite>') }];

/** A loopback server answering each request with the next of `answers`; records the meta it got. */
async function server(answers: number[]) {
  const metas: string[] = [];
  const s = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('latin1');
    });
    req.on('end', () => {
      const meta = /name="meta"\r\n\r\n([^\r]*)/.exec(body)?.[1] ?? '';
      metas.push(meta);
      const status = answers[metas.length - 1] ?? 200;
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(status === 200 ? JSON.stringify({ upload_id: 'u1', duplicate: false }) : '{"error":{}}');
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, metas, close: () => s.close() };
}

describe('postUpload retries', () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  it('retries a 503 with the same content-derived upload_key, then succeeds', async () => {
    const s = await server([503, 502, 200]);
    close = s.close;
    const retried: string[] = [];
    const res = await postUpload(s.url, 't', META, FILES, {
      retryDelayMs: 1,
      onRetry: (m) => retried.push(m),
    });
    expect(res).toMatchObject({ upload_id: 'u1' });
    expect(s.metas).toHaveLength(3);
    const keys = s.metas.map((m) => (JSON.parse(m) as { upload_key: string }).upload_key);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^auto-[0-9a-f]{40}$/);
    expect(retried).toHaveLength(2);
  });

  it('gives up after its retries, and never retries a 4xx', async () => {
    const failing = await server([500, 500, 500, 500]);
    close = failing.close;
    await expect(postUpload(failing.url, 't', META, FILES, { retryDelayMs: 1 })).rejects.toBeInstanceOf(
      CliError,
    );
    expect(failing.metas).toHaveLength(3);
    failing.close();
    const refused = await server([400]);
    close = refused.close;
    await expect(postUpload(refused.url, 't', META, FILES, { retryDelayMs: 1 })).rejects.toBeInstanceOf(
      CliError,
    );
    expect(refused.metas).toHaveLength(1);
  });
});
