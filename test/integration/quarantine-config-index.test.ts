// getQuarantineConfig answers from each process's index of a repository's quarantined test ids,
// kept at the repository's health version (src/app/health/quarantine-index.ts). What a user changes
// — a quarantine override — must be in the very next answer, of this server and of another server
// on the same database; and the answer must not depend on whether the index is held.
// (analytics-cli sends repo, orgUrlSlug, remoteUrls and testIdentifiers of name, parentName,
// className, file, id, variant; trunk-api.md §3.)
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { buildApp } from '../../src/http/app.ts';
import { REPO } from '../support/app.ts';
import { storedTestIds } from '../support/reads.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const NAMES = Array.from({ length: 40 }, (_, i) => `test_${String(i).padStart(2, '0')}`);

describe('getQuarantineConfig from the kept index', () => {
  const t = useTestApp();
  /** A second server on the same database (its own connection, its own in-memory index). */
  let other: { app: FastifyInstance; database: Database };
  /** A third one that keeps no index (MAINLINE_QUARANTINE_INDEX_IDS=0): reads the database each time. */
  let uncached: { app: FastifyInstance; database: Database };
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const ids = new Map<string, string>();

  const serverOn = async (env: Record<string, string>) => {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      MAINLINE_RATE_LIMIT: '0',
      MAINLINE_AUTH_FAIL_LIMIT: '0',
      ...t.db.env,
      ...env,
    });
    const database = openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      ...(config.databaseUrl !== undefined ? { poolSize: 2 } : {}),
    });
    return { app: await buildApp({ config, database }), database };
  };
  const ask = async (app: FastifyInstance, testIdentifiers?: unknown[]) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/metrics/getQuarantineConfig',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload: JSON.stringify({
        repo: REPO,
        orgUrlSlug: 'acme',
        remoteUrls: [],
        ...(testIdentifiers !== undefined ? { testIdentifiers } : {}),
      }),
    });
    expect(res.statusCode).toBe(200);
    return res.json() as { isDisabled: boolean; testIds: string[] };
  };
  /** The raw answer without identifiers: its body text and content type. */
  const raw = async (app: FastifyInstance) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/metrics/getQuarantineConfig',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload: JSON.stringify({ repo: REPO, orgUrlSlug: 'acme', remoteUrls: [] }),
    });
    expect(res.statusCode).toBe(200);
    return { body: res.body, type: res.headers['content-type'] };
  };
  const everyTest = () =>
    NAMES.map((name) => ({ name, className: 'pkg.Class', file: null, parentName: 'suite' }));
  const override = async (name: string, setting: 'ALWAYS_QUARANTINE' | 'NEVER_QUARANTINE' | 'AUTO') => {
    const res = await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      { ...scope, test_id: ids.get(name), setting },
      t.orgToken,
    );
    expect(res.statusCode).toBe(200);
  };
  const idsOf = (...names: string[]) => names.map((n) => ids.get(n) as string).sort();

  beforeAll(async () => {
    const res = await upload(t, t.orgToken, [
      { name: 'r.xml', content: junitXml(NAMES.map((name) => ({ name }))) },
    ]);
    expect(res.statusCode).toBe(200);
    for (const [name, id] of await storedTestIds(t)) ids.set(name, id);
    expect(ids.size).toBe(NAMES.length);
    other = await serverOn({});
    uncached = await serverOn({ MAINLINE_QUARANTINE_INDEX_IDS: '0' });
  });
  afterAll(async () => {
    for (const s of [other, uncached]) {
      await s?.app.close();
      await s?.database.close().catch(() => undefined);
    }
  });

  it('names the quarantined ones of the tests sent, each once and in id order, and all of them when none are sent', async () => {
    expect(await ask(t.app, everyTest())).toEqual({ isDisabled: false, testIds: [] });
    for (const name of ['test_31', 'test_04', 'test_17']) await override(name, 'ALWAYS_QUARANTINE');
    const sent = [
      ...everyTest(),
      ...everyTest().slice(0, 20), // sent twice
      { id: ids.get('test_09')?.toUpperCase() }, // by id, as the CLI may, in any case
      { name: 'never_uploaded', className: 'pkg.Class' },
    ];
    await override('test_09', 'ALWAYS_QUARANTINE');
    const expected = idsOf('test_04', 'test_09', 'test_17', 'test_31');
    expect(await ask(t.app, sent)).toEqual({ isDisabled: false, testIds: expected });
    // Without identifiers: the quarantined list's order (by name).
    const list = await t.post(
      '/v1/flaky-tests/list-quarantined-tests',
      { ...scope, page_query: { page_size: 100 } },
      t.orgToken,
    );
    const listed = (list.json().quarantined_tests as { test_case_id: string }[]).map((q) => q.test_case_id);
    expect(listed).toEqual(['test_04', 'test_09', 'test_17', 'test_31'].map((n) => ids.get(n)));
    expect(await ask(t.app)).toEqual({ isDisabled: false, testIds: listed });
    // The same bytes from a server that keeps no index.
    for (const body of [sent, undefined])
      expect(await ask(uncached.app, body)).toEqual(await ask(t.app, body));
    // Without identifiers the answer is kept as bytes with the index: byte for byte what the route's
    // serializer writes (the server without an index answers through it), asked twice.
    const uncachedRaw = await raw(uncached.app);
    for (let i = 0; i < 2; i++) {
      const kept = await raw(t.app);
      expect(kept.body).toBe(uncachedRaw.body);
      expect(kept.type).toBe(uncachedRaw.type);
    }
  });

  it('answers a quarantine change in the next call: set, lifted, and set back to automatic', async () => {
    expect((await ask(t.app, everyTest())).testIds).not.toContain(ids.get('test_22'));
    await override('test_22', 'ALWAYS_QUARANTINE');
    expect((await ask(t.app, everyTest())).testIds).toContain(ids.get('test_22'));
    expect((await ask(t.app)).testIds).toContain(ids.get('test_22'));
    await override('test_22', 'NEVER_QUARANTINE');
    expect((await ask(t.app, everyTest())).testIds).not.toContain(ids.get('test_22'));
    expect((await ask(t.app)).testIds).not.toContain(ids.get('test_22'));
    await override('test_04', 'AUTO');
    expect(await ask(t.app, everyTest())).toEqual({
      isDisabled: false,
      testIds: idsOf('test_09', 'test_17', 'test_31'),
    });
  });

  it('a change made through one server is in the next answer of another server on the same database', async () => {
    // Both servers hold the repository's index now.
    const before = await ask(t.app, everyTest());
    expect(await ask(other.app, everyTest())).toEqual(before);
    expect(await ask(other.app)).toEqual(await ask(t.app));
    await override('test_35', 'ALWAYS_QUARANTINE');
    expect((await ask(other.app, everyTest())).testIds).toContain(ids.get('test_35'));
    expect((await ask(other.app)).testIds).toContain(ids.get('test_35'));
    // And the other way round: a change through the other server, seen here.
    const res = await other.app.inject({
      method: 'POST',
      url: '/v1/flaky-tests/set-quarantine-override',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload: JSON.stringify({ ...scope, test_id: ids.get('test_35'), setting: 'NEVER_QUARANTINE' }),
    });
    expect(res.statusCode).toBe(200);
    expect((await ask(t.app, everyTest())).testIds).not.toContain(ids.get('test_35'));
    expect(await ask(t.app, everyTest())).toEqual(before);
  });

  it('an upload that quarantines nothing leaves the answer as it was, and turning quarantining off says isDisabled', async () => {
    const before = await ask(t.app, everyTest());
    const res = await upload(
      t,
      t.orgToken,
      [{ name: 'r.xml', content: junitXml(NAMES.map((name) => ({ name }))) }],
      {
        sha: 'b2',
      },
    );
    expect(res.statusCode).toBe(200);
    expect(await ask(t.app, everyTest())).toEqual(before);
    await t.post(
      '/v1/flaky-tests/update-repository-settings',
      { ...scope, settings: { quarantining_enabled: false } },
      t.orgToken,
    );
    expect(await ask(other.app, everyTest())).toEqual({ isDisabled: true, testIds: [] });
    expect(await ask(t.app)).toEqual({ isDisabled: true, testIds: [] });
    expect((await raw(t.app)).body).toBe((await raw(uncached.app)).body);
  });
});
