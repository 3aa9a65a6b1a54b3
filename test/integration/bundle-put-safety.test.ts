// The bundle PUT (Trunk's analytics-cli flow) through the real HTTP stack: the signed URL acts only for
// the token that asked for it (a revoked token's URL is refused before anything is read or stored), a
// used URL answers its upload again without decoding the body, two PUTs to one URL never decode it
// twice (the URL is claimed while its body arrives), and the bundle is decoded on a thread of its
// own, not the request thread, once its body has all arrived.
import { PassThrough } from 'node:stream';
import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createToken, revokeToken } from '../../src/app/tokens.ts';
import { bundleDecodeStats } from '../../src/http/routes/metrics/raw-routes.ts';
import { REPO } from '../support/app.ts';
import { bundleClaimed, storedTestNames, uploadCount } from '../support/reads.ts';
import { putBundle, tenantBundle } from '../support/seed.ts';
import { junitXml } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

describe('PUT /v1/metrics/bundle-uploads/:id safety', () => {
  const t = useTestApp();

  const stats = () => {
    const s = bundleDecodeStats(t.app);
    if (s === undefined) throw new Error('no bundle decoders registered');
    return { ...s };
  };

  async function signedUrl(as = t.orgToken): Promise<string> {
    const res = await t.post('/v1/metrics/createBundleUpload', { repo: REPO, orgUrlSlug: 'acme' }, as);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().url;
  }

  const bundle = (name: string) => tenantBundle(REPO, [junitXml([{ name, fail: 'boom' }])]);

  /** Whether a PUT holds the URL's claim now. */
  async function claimed(url: URL): Promise<boolean> {
    return bundleClaimed(t, url.pathname.split('/').pop() as string);
  }

  it('refuses the PUT of a URL whose token was revoked with 401, before decoding, and stores nothing', async () => {
    const issued = await createToken(t.db.database.db, { orgSlug: 'acme', name: 'ci', now: Date.now() });
    const url = await signedUrl(issued.token);
    await revokeToken(t.db.database.db, issued.id, Date.now(), t.caches.tokens);
    const [uploads, tests, before] = [await uploadCount(t), (await storedTestNames(t)).length, stats()];
    const res = await putBundle(t, url, await bundle('revoked_test'));
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json().error.code).toBe('INVALID_TOKEN');
    expect(res.json().error.message).toMatch(/token that created this upload URL has been revoked/);
    expect(stats().decodes).toBe(before.decodes);
    expect(await uploadCount(t)).toBe(uploads);
    expect((await storedTestNames(t)).length).toBe(tests);
  });

  it('answers a repeated PUT with the first upload’s result, marked duplicate, without decoding it again', async () => {
    const url = await signedUrl();
    const first = await putBundle(t, url, await bundle('repeated_test'));
    expect(first.statusCode, first.body).toBe(200);
    const decoded = stats();
    expect(decoded.decodedBytes).toBeGreaterThan(0);
    const again = await putBundle(t, url, await bundle('repeated_test'));
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ ...first.json(), duplicate: true });
    // Not even read: a body that is no bundle at all gets the same answer.
    const garbage = await putBundle(t, url, new TextEncoder().encode('not a bundle'));
    expect(garbage.json()).toEqual({ ...first.json(), duplicate: true });
    expect(stats()).toEqual(decoded);
  });

  it('lets one of two concurrent PUTs to a URL decode it; the other gets 409, then the result', async () => {
    const url = new URL(await signedUrl());
    const bytes = await bundle('concurrent_test');
    const body = new PassThrough();
    const before = stats();
    const slow = t.app.inject({ method: 'PUT', url: url.pathname + url.search, payload: body });
    body.write(bytes.subarray(0, 100));
    // The first PUT holds the URL (its claim) while its body is still arriving.
    await expect.poll(() => claimed(url)).toBe(true);
    const second = await putBundle(t, url.href, bytes);
    expect(second.statusCode, second.body).toBe(409);
    expect(second.json().error.code).toBe('CONFLICT');
    body.end(bytes.subarray(100));
    const first = await slow;
    expect(first.statusCode, first.body).toBe(200);
    const third = await putBundle(t, url.href, bytes);
    expect(third.json()).toEqual({ ...first.json(), duplicate: true });
    expect(stats().decodes).toBe(before.decodes + 1);
  });

  it('gives the URL back after a refused bundle, so a corrected PUT is stored', async () => {
    const url = await signedUrl();
    const refused = await putBundle(t, url, new TextEncoder().encode('<testsuite/>'));
    expect(refused.statusCode).toBe(415);
    const res = await putBundle(t, url, await bundle('retried_test'));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().duplicate).toBe(false);
  });

  it('decodes the bundle on a thread of its own, while the request thread answers /healthz', async () => {
    const url = new URL(await signedUrl());
    const bytes = await bundle('threaded_test');
    const body = new PassThrough();
    const before = stats().decodes;
    const put = t.app.inject({ method: 'PUT', url: url.pathname + url.search, payload: body });
    body.write(bytes.subarray(0, 600));
    // The PUT is receiving its body (decoded only once it has all arrived) when /healthz is asked.
    await expect.poll(() => claimed(url)).toBe(true);
    expect(stats().decodes).toBe(before);
    const events: string[] = [];
    const healthz = t.app.inject({ method: 'GET', url: '/healthz' }).then((r) => {
      events.push(`healthz ${r.statusCode}`);
    });
    await healthz;
    body.end(bytes.subarray(600));
    const res = await put;
    events.push(`put ${res.statusCode}`);
    expect(events).toEqual(['healthz 200', 'put 200']);
    expect(stats().lastThreadId).toBeDefined();
    expect(stats().lastThreadId).not.toBe(threadId);
  });
});
