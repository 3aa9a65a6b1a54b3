// The per-process caches of the read path (tokens, repositories): what they may never change.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { revokeToken } from '../../src/app/tokens.ts';
import { openDatabase } from '../../src/db/database.ts';
import { buildTestApp, REPO } from '../support/app.ts';
import { apiTokenId } from '../support/reads.ts';
import { sentStatements } from '../support/statements.ts';
import { useTestApp } from '../support/use-test-app.ts';

const TTL_MS = 5_000;

describe('read caches', () => {
  let clock = Date.UTC(2026, 10, 1);
  const t = useTestApp({ env: { MAINLINE_TOKEN_CACHE_SECONDS: String(TTL_MS / 1000) }, now: () => clock });
  const getRepo = (token: string, repo: object = REPO) => t.post('/v1/repositories/get', { repo }, token);

  afterEach(() => vi.restoreAllMocks());

  const statements = (run: () => Promise<unknown>) => sentStatements(t.db.database.db, run);

  it('refuses a token revoked in this process on the next request, though the cache held it', async () => {
    const token = await t.token('revoked-here');
    await t.post('/v1/repositories/create', { repo: REPO }, token);
    expect((await getRepo(token)).statusCode).toBe(200);
    // Held: the next request does not look the token up.
    expect((await statements(() => getRepo(token))).filter((q) => q.includes('api_tokens'))).toEqual([]);
    await revokeToken(t.db.database.db, await apiTokenId(t, token), clock, t.caches.tokens);
    const res = await getRepo(token);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('INVALID_TOKEN');
  });

  it('refuses a token revoked by another process within MAINLINE_TOKEN_CACHE_SECONDS', async () => {
    const token = await t.token('revoked-elsewhere');
    await t.post('/v1/repositories/create', { repo: REPO }, token);
    expect((await getRepo(token)).statusCode).toBe(200);
    // What `mainline token revoke` does: its own connection, in its own process.
    const cli = openDatabase({
      databaseUrl: t.db.env['DATABASE_URL'],
      dataDir: t.db.env['MAINLINE_DATA_DIR'] ?? '',
    });
    try {
      await revokeToken(cli.db, await apiTokenId(t, token), clock);
    } finally {
      await cli.close();
    }
    clock += TTL_MS - 1;
    expect((await getRepo(token)).statusCode).toBe(200);
    clock += 1;
    expect((await getRepo(token)).json().error.code).toBe('INVALID_TOKEN');
  });

  it('looks every token up when MAINLINE_TOKEN_CACHE_SECONDS is 0', async () => {
    const u = await buildTestApp({ MAINLINE_TOKEN_CACHE_SECONDS: '0' });
    try {
      const token = await u.token('uncached');
      await u.post('/v1/repositories/create', { repo: REPO }, token);
      expect((await u.post('/v1/repositories/get', { repo: REPO }, token)).statusCode).toBe(200);
      await u.db.database.db.updateTable('api_tokens').set({ revoked_at: 1 }).execute();
      expect((await u.post('/v1/repositories/get', { repo: REPO }, token)).statusCode).toBe(401);
    } finally {
      await u.close();
    }
  });

  it("never answers one organization's cached repository to another", async () => {
    const a = await t.token('tenant-a');
    const b = await t.token('tenant-b');
    const created = await t.post('/v1/repositories/create', { repo: REPO }, a);
    const aId = created.json().repository.id;
    // Warm both caches with organization A's token and repository.
    expect((await getRepo(a)).json().repository.id).toBe(aId);
    expect((await getRepo(a)).json().repository.id).toBe(aId);
    for (const repo of [REPO, { host: 'GitHub.com', owner: 'ACME', name: 'Web' }]) {
      const res = await getRepo(b, repo);
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('REPO_NOT_FOUND');
    }
    const settings = await t.post(
      '/v1/flaky-tests/get-repository-settings',
      { repo: REPO, org_url_slug: 'tenant-b' },
      b,
    );
    expect(settings.statusCode).toBe(404);
    // B's own repository of the same name is B's, and A still gets A's.
    const bId = (await t.post('/v1/repositories/create', { repo: REPO }, b)).json().repository.id;
    expect(bId).not.toBe(aId);
    expect((await getRepo(b)).json().repository.id).toBe(bId);
    expect((await getRepo(a)).json().repository.id).toBe(aId);
    expect((await getRepo(b)).json().repository.id).toBe(bId);
  });

  it('finds a repository created after a lookup missed it', async () => {
    const token = await t.token('late-repo');
    const repo = { ...REPO, name: 'later' };
    expect((await getRepo(token, repo)).statusCode).toBe(404);
    expect((await t.post('/v1/repositories/create', { repo }, token)).statusCode).toBe(200);
    expect((await getRepo(token, repo)).statusCode).toBe(200);
  });

  it("answers a token's first request while a write holds the token's row (last_used_at is written later)", async () => {
    const token = await t.token('busy-writer');
    await t.post('/v1/repositories/create', { repo: REPO }, token);
    clock += 120_000; // past the interval at which last_used_at is written again
    const id = await apiTokenId(t, token);
    const db = t.db.database.db;
    await db.transaction().execute(async (trx) => {
      // Holds the writer (SQLite) or the row's lock (PostgreSQL) until the request is answered.
      await trx.updateTable('api_tokens').set({ name: 'busy' }).where('id', '=', id).execute();
      expect((await getRepo(token)).statusCode).toBe(200);
    });
  });

  it('answers a warm repositories/get without the database, and settings with none on SQLite, one on PostgreSQL', async () => {
    const token = await t.token('warm');
    await t.post('/v1/repositories/create', { repo: REPO }, token);
    const body = { repo: REPO, org_url_slug: 'warm' };
    await getRepo(token);
    await t.post('/v1/flaky-tests/get-repository-settings', body, token);
    expect(await statements(() => getRepo(token))).toEqual([]);
    const settings = await statements(() => t.post('/v1/flaky-tests/get-repository-settings', body, token));
    // Kept while the database is unchanged on SQLite (app/health/settings.ts); PostgreSQL reads the row.
    expect(settings).toHaveLength(t.db.env['DATABASE_URL'] === undefined ? 0 : 1);
  });
});
