// getQuarantineConfig keeps a large body it was sent before parsed (http/body-checks.ts, route config
// keepParsedBody) and the test ids of its identifiers with it (IdentifierIds.uniqueIds): the CLI sends
// the same test ids run after run. Only the parse is kept, never the answer: the same bytes must give
// the quarantine of the moment, each organization its own, and a body that fails validation fails
// every time.
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { storedTestIds } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const NAMES = Array.from({ length: 40 }, (_, i) => `test_${String(i).padStart(2, '0')}`);
/** Ignored by the answer; makes the body larger than the 16 KB from which bodies are kept. */
const REMOTE_URLS = Array.from({ length: 600 }, (_, i) => `https://git.example/acme/web-${i}.git`);

describe('getQuarantineConfig with a kept body', () => {
  const t = useTestApp();

  const text = (org: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      repo: REPO,
      orgUrlSlug: org,
      remoteUrls: REMOTE_URLS,
      testIdentifiers: NAMES.map((name) => ({ name, className: 'pkg.Class', parentName: 'suite' })),
      ...extra,
    });
  const ask = async (token: string, body: string) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/metrics/getQuarantineConfig',
      headers: { 'content-type': 'application/json', 'x-api-token': token },
      payload: body,
    });
    return { status: res.statusCode, body: res.json() };
  };
  const override = async (id: string, setting: 'ALWAYS_QUARANTINE' | 'AUTO') => {
    const res = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { repo: REPO, org_url_slug: 'acme', test_id: id, setting },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
  };

  it('answers the same bytes with the quarantine of the moment, per organization', async () => {
    const junit = [{ name: 'r.xml', content: junitXml(NAMES.map((name) => ({ name }))) }];
    expect((await upload(t, t.orgToken, junit)).statusCode).toBe(200);
    const ids = await storedTestIds(t);
    const otherToken = await t.token('globex');
    expect((await upload(t, otherToken, junit, { org: 'globex' })).statusCode).toBe(200);
    const body = text('acme');
    expect(body.length).toBeGreaterThan(16 * 1024);

    expect(await ask(t.orgToken, body)).toEqual({ status: 200, body: { isDisabled: false, testIds: [] } });
    await override(ids.get('test_07') as string, 'ALWAYS_QUARANTINE');
    await override(ids.get('test_31') as string, 'ALWAYS_QUARANTINE');
    const both = [ids.get('test_07'), ids.get('test_31')].sort();
    for (let i = 0; i < 3; i++)
      expect(await ask(t.orgToken, body)).toEqual({
        status: 200,
        body: { isDisabled: false, testIds: both },
      });
    await override(ids.get('test_07') as string, 'AUTO');
    expect(await ask(t.orgToken, body)).toEqual({
      status: 200,
      body: { isDisabled: false, testIds: [ids.get('test_31')] },
    });
    // The same identifiers from another organization: its own repository, where nothing is quarantined.
    const other = text('globex');
    expect(await ask(otherToken, other)).toEqual({ status: 200, body: { isDisabled: false, testIds: [] } });
    // And the acme body sent with globex's token is refused as before (the slug is not its own).
    const foreign = await ask(otherToken, body);
    expect(foreign.status).toBe(404);
    expect(await ask(otherToken, body)).toEqual(foreign);
  });

  it('refuses a large body that fails validation every time it is sent', async () => {
    const bad = text('acme', { testIdentifiers: [...NAMES.map((name) => ({ name })), { name: 7 }] });
    expect(bad.length).toBeGreaterThan(16 * 1024);
    const first = await ask(t.orgToken, bad);
    expect(first.status).toBe(400);
    expect(first.body.error.message).toContain('$.testIdentifiers[40].name');
    expect(await ask(t.orgToken, bad)).toEqual(first);
  });
});
