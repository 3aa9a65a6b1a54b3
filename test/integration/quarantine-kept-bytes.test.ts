// getQuarantineConfig answers a large body its organization sent before from the parse kept for it,
// found by the body's bytes as they arrive (http/body-checks.ts): never joined, never decoded. The
// lookup samples a few bytes, so bodies of the same organization and length that differ elsewhere
// must still each get their own answer; and a body that arrives in many pieces over a real socket
// must be matched (or parsed) the same as one that arrives whole.
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { listenOnLoopback } from '../support/raw-http.ts';
import { storedTestIds } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

/** test_000 … test_499: names of one length, so bodies naming different tests have the same length. */
const NAMES = Array.from({ length: 500 }, (_, i) => `test_${String(i).padStart(3, '0')}`);

describe('getQuarantineConfig with kept bodies matched by their bytes', () => {
  const t = useTestApp();
  const ids = new Map<string, string>();
  let port: number;

  /** The body naming `names`; each identifier as the CLI sends it. */
  const bodyOf = (names: readonly string[], pad = 0) =>
    JSON.stringify({
      repo: REPO,
      orgUrlSlug: 'acme',
      // Ignored by the answer; keeps every body here above the 16 KB from which bodies are kept.
      remoteUrls: [`https://git.example/acme/web.git#${'x'.repeat(4000 + pad)}`],
      testIdentifiers: names.map((name) => ({
        name,
        parentName: 'suite',
        className: 'pkg.Class',
        file: null,
      })),
    });
  const ask = async (body: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/metrics/getQuarantineConfig',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    return res.json() as { isDisabled: boolean; testIds: string[] };
  };
  /** The same request over a real socket, its body written in pieces of `piece` bytes. */
  const askInPieces = (body: string, piece: number) =>
    new Promise<{ isDisabled: boolean; testIds: string[] }>((resolve, reject) => {
      const bytes = Buffer.from(body);
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/metrics/getQuarantineConfig',
          headers: {
            'content-type': 'application/json',
            'content-length': String(bytes.length),
            'x-api-token': t.orgToken,
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => {
            text += d;
          });
          res.on('end', () => {
            if (res.statusCode === 200) resolve(JSON.parse(text));
            else reject(new Error(`${res.statusCode}: ${text}`));
          });
        },
      );
      req.on('error', reject);
      const write = (at: number) => {
        if (at >= bytes.length) {
          req.end();
          return;
        }
        req.write(bytes.subarray(at, at + piece));
        setImmediate(() => write(at + piece));
      };
      write(0);
    });
  const override = async (name: string) => {
    const res = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo: REPO, org_url_slug: 'acme', test_id: ids.get(name), setting: 'ALWAYS_QUARANTINE' },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
  };

  beforeAll(async () => {
    const res = await upload(t, t.orgToken, [
      { name: 'r.xml', content: junitXml(NAMES.map((name) => ({ name }))) },
    ]);
    expect(res.statusCode).toBe(200);
    for (const [name, id] of await storedTestIds(t)) ids.set(name, id);
    await override('test_199');
    port = await listenOnLoopback(t.app);
  });

  it('answers bodies of the same length that differ in a few bytes each with their own quarantine', async () => {
    // Bodies naming test_000…test_198 and then one more test: test_199 (quarantined) or test_2xx.
    // Each pad moves the differing bytes, so some differences fall between the sampled bytes.
    for (let pad = 0; pad < 8; pad++) {
      const quarantined = bodyOf([...NAMES.slice(0, 199), 'test_199'], pad);
      expect(quarantined.length).toBeGreaterThan(16 * 1024);
      for (let round = 0; round < 2; round++)
        expect(await ask(quarantined)).toEqual({ isDisabled: false, testIds: [ids.get('test_199')] });
      for (const last of ['test_198', 'test_190', 'test_109', 'test_209']) {
        const other = bodyOf([...NAMES.slice(0, 199), last], pad);
        expect(other.length).toBe(quarantined.length);
        expect(await ask(other)).toEqual({ isDisabled: false, testIds: [] });
        expect(await ask(quarantined)).toEqual({ isDisabled: false, testIds: [ids.get('test_199')] });
      }
    }
  });

  it('matches and parses a body written to a real socket in small pieces as one sent whole', async () => {
    const body = bodyOf(NAMES.slice(150, 450));
    const whole = await ask(body);
    expect(whole).toEqual({ isDisabled: false, testIds: [ids.get('test_199')] });
    for (const piece of [1000, 4096, 7777]) expect(await askInPieces(body, piece)).toEqual(whole);
    // A body first seen in pieces is kept as well, and found again whether whole or in pieces.
    const fresh = bodyOf(NAMES.slice(100, 400));
    expect(await askInPieces(fresh, 3000)).toEqual(whole);
    expect(await ask(fresh)).toEqual(whole);
    expect(await askInPieces(fresh, 5000)).toEqual(whole);
  });
});
