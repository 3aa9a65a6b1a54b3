// The kept reads' versions (a repository's health_version and read version, getQuarantineConfig's
// repository and settings) are read again only when the database may have changed
// (app/health/read-answers.ts UnchangedReads, db/change-stamp.ts): on SQLite the reader connection's
// data_version, which every commit of another connection changes, so a warm kept read asks the
// database nothing; on PostgreSQL one statement. What may never change: a write by another server on
// the same database (its own connection, its own caches) is in this server's very next answer.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { buildApp } from '../../src/http/app.ts';
import { REPO } from '../support/app.ts';
import { storedTestIds } from '../support/reads.ts';
import { sentStatements } from '../support/statements.ts';
import { junitXml, upload } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

const NAMES = ['alpha', 'beta', 'gamma'];

describe('kept reads while the database is unchanged', () => {
  const t = useTestApp();
  /** Another server on the same database: its own connection, its own caches. */
  let other: { app: FastifyInstance; database: Database };
  const scope = { repo: REPO, org_url_slug: 'acme' };
  const ids = new Map<string, string>();
  const sqlite = () => t.db.env['DATABASE_URL'] === undefined;

  const post = async (app: FastifyInstance, url: string, body: object) => {
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Record<string, unknown>;
  };
  /** The three kept reads, as `app` answers them. */
  const reads = async (app: FastifyInstance) => ({
    quarantined: await post(app, '/v1/flaky-tests/list-quarantined-tests', {
      ...scope,
      page_query: { page_size: 10 },
    }),
    details: await post(app, '/v1/flaky-tests/get-test-details', { ...scope, test_id: ids.get('beta') }),
    config: await post(app, '/v1/metrics/getQuarantineConfig', {
      repo: REPO,
      orgUrlSlug: 'acme',
      testIdentifiers: NAMES.map((name) => ({
        name,
        className: 'pkg.Class',
        parentName: 'suite',
        file: null,
      })),
    }),
  });
  const statements = (run: () => Promise<unknown>) => sentStatements(t.db.database.db, run);

  beforeAll(async () => {
    const res = await upload(t, t.orgToken, [
      { name: 'r.xml', content: junitXml(NAMES.map((name) => ({ name }))) },
    ]);
    expect(res.statusCode).toBe(200);
    for (const [name, id] of await storedTestIds(t)) ids.set(name, id);
    const config = loadConfig({ LOG_LEVEL: 'silent', MAINLINE_RATE_LIMIT: '0', ...t.db.env });
    const database = openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      ...(config.databaseUrl !== undefined ? { poolSize: 2 } : {}),
    });
    other = { app: await buildApp({ config, database }), database };
  });
  afterAll(async () => {
    await other?.app.close();
    await other?.database.close().catch(() => undefined);
  });

  it('answers warm kept reads without asking the database on SQLite, with one statement each on PostgreSQL', async () => {
    // The first reads after the upload fold its counts into the hour rows (a commit: the kept values
    // read before it are read again once); from then on they are warm.
    await reads(t.app);
    const warm = await reads(t.app);
    for (const read of ['quarantined', 'details', 'config'] as const) {
      let again: Record<string, unknown> | undefined;
      const sent = await statements(async () => {
        again = (await reads(t.app))[read];
      });
      expect(again).toEqual(warm[read]);
      // reads() sends all three; each of them asks at most once.
      expect(sent).toHaveLength(sqlite() ? 0 : 3);
    }
  });

  it("puts another server's quarantine change in this server's next answers", async () => {
    const before = await reads(t.app);
    expect(before.config).toEqual({ isDisabled: false, testIds: [] });
    await post(other.app, '/v1/flaky-tests/set-quarantine-override', {
      ...scope,
      test_id: ids.get('beta'),
      setting: 'ALWAYS_QUARANTINE',
    });
    const after = await reads(t.app);
    expect(after.config).toEqual({ isDisabled: false, testIds: [ids.get('beta')] });
    expect(after.quarantined['quarantined_tests']).toHaveLength(1);
    expect(after.details).not.toEqual(before.details);
    // Exactly what the server that made the change answers.
    expect(after).toEqual(await reads(other.app));
  });

  it("puts another server's settings change (no test changed) in this server's next answer", async () => {
    expect((await reads(t.app)).config['isDisabled']).toBe(false);
    await post(other.app, '/v1/flaky-tests/update-repository-settings', {
      ...scope,
      settings: { quarantining_enabled: false },
    });
    expect((await reads(t.app)).config).toEqual({ isDisabled: true, testIds: [] });
    await post(other.app, '/v1/flaky-tests/update-repository-settings', {
      ...scope,
      settings: { quarantining_enabled: true },
    });
    expect((await reads(t.app)).config['isDisabled']).toBe(false);
  });

  it('puts a change this server made in its own next answers', async () => {
    const before = await reads(t.app);
    await post(t.app, '/v1/flaky-tests/set-quarantine-override', {
      ...scope,
      test_id: ids.get('gamma'),
      setting: 'ALWAYS_QUARANTINE',
    });
    const after = await reads(t.app);
    expect(after.config['testIds']).toContain(ids.get('gamma'));
    expect(after.quarantined).not.toEqual(before.quarantined);
    expect(after).toEqual(await reads(other.app));
  });
});
