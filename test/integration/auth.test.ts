import { beforeAll, describe, expect, it } from 'vitest';
import { revokeToken } from '../../src/app/tokens.ts';
import { REPO } from '../support/app.ts';
import { apiTokenId, apiTokenRows } from '../support/reads.ts';
import { useTestApp } from '../support/use-test-app.ts';

describe('authentication and tenancy', () => {
  const t = useTestApp();
  let globex: string;

  beforeAll(async () => {
    globex = await t.token('globex');
    expect((await t.post('/v1/repositories/create', { repo: REPO }, t.orgToken)).statusCode).toBe(200);
  });

  it('answers 401 AUTHENTICATION_REQUIRED when x-api-token is missing', async () => {
    const res = await t.post('/v1/repositories/get', { repo: REPO });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('AUTHENTICATION_REQUIRED');
    expect(res.json().error.message).toMatch(/x-api-token/);
  });

  it('checks the token before validating the body', async () => {
    const res = await t.post('/v1/repositories/get', { nonsense: true });
    expect(res.statusCode).toBe(401);
  });

  it('answers 401 INVALID_TOKEN for a token it never issued', async () => {
    const res = await t.post('/v1/repositories/get', { repo: REPO }, `${t.orgToken}x`);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('INVALID_TOKEN');
  });

  it('accepts the token as Authorization: Bearer too', async () => {
    const res = await t.post('/v1/repositories/get', { repo: REPO }, undefined, {
      authorization: `Bearer ${t.orgToken}`,
    });
    expect(res.statusCode).toBe(200);
  });

  it('refuses a revoked token at once', async () => {
    const token = await t.token('acme');
    expect((await t.post('/v1/repositories/get', { repo: REPO }, token)).statusCode).toBe(200);
    await revokeToken(t.db.database.db, await apiTokenId(t, token), Date.now(), t.caches.tokens);
    const res = await t.post('/v1/repositories/get', { repo: REPO }, token);
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('INVALID_TOKEN');
  });

  it("answers another organization's repository exactly as a repository that does not exist", async () => {
    const foreign = await t.post('/v1/repositories/get', { repo: REPO }, globex);
    const missing = await t.post('/v1/repositories/get', { repo: { ...REPO, name: 'nope' } }, globex);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('REPO_NOT_FOUND');
    expect(foreign.json().error.message.replace('/web', '/nope')).toBe(missing.json().error.message);
  });

  it('lists only the caller organization’s repositories', async () => {
    const res = await t.post('/v1/repositories/list', { page_query: { page_size: 100 } }, globex);
    expect(res.statusCode).toBe(200);
    expect(res.json().repositories).toEqual([]);
    expect(res.json().page.total_rows).toBe(0);
  });

  it('answers 404 ORG_NOT_FOUND when org_url_slug is not the token’s organization', async () => {
    for (const slug of ['globex', 'no-such-org']) {
      const res = await t.post('/v1/repositories/get', { repo: REPO, org_url_slug: slug }, t.orgToken);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toEqual({
        code: 'ORG_NOT_FOUND',
        message: `Organization "${slug}" was not found for this API token`,
      });
    }
    const own = await t.post('/v1/repositories/get', { repo: REPO, org_url_slug: 'ACME' }, t.orgToken);
    expect(own.statusCode).toBe(200);
  });

  it('stores tokens only as hashes', async () => {
    const rows = await apiTokenRows(t);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(t.orgToken);
    expect(stored).not.toContain(t.orgToken.slice(12));
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  it('needs no token for GET /v1/status', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/status' });
    expect(res.statusCode).toBe(200);
  });
});
