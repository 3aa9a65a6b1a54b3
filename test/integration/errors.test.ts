import { describe, expect, it } from 'vitest';
import { buildTestApp, REPO } from '../support/app.ts';
import { useTestApp } from '../support/use-test-app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the error envelope', () => {
  const t = useTestApp({ env: { MAINLINE_BODY_LIMIT: '2048' } });

  it('names every bad field with its JSON path and what was expected', async () => {
    const res = await t.post(
      '/v1/repositories/list',
      { page_query: { page_size: 0, page_token: 7 }, org_url_slug: '' },
      t.orgToken,
    );
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.details).toEqual(
      expect.arrayContaining([
        {
          path: '$.page_query.page_size',
          expected: 'a number >= 1',
          message: '$.page_query.page_size must be a number >= 1',
        },
        {
          path: '$.page_query.page_token',
          expected: 'a string',
          message: '$.page_query.page_token must be a string',
        },
        expect.objectContaining({ path: '$.org_url_slug', expected: 'a string of at least 1 character' }),
      ]),
    );
    expect(error.message).toContain('$.page_query.page_size must be a number >= 1');
  });

  it('names each missing required field', async () => {
    const res = await t.post('/v1/repositories/get', { repo: { host: 'github.com' } }, t.orgToken);
    expect(res.statusCode).toBe(400);
    const paths = res.json().error.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['$.repo.owner', '$.repo.name']));
  });

  it('does not coerce a numeric string into an integer', async () => {
    const res = await t.post('/v1/repositories/list', { page_query: { page_size: '3' } }, t.orgToken);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details[0]).toMatchObject({
      path: '$.page_query.page_size',
      expected: 'an integer',
    });
  });

  it.each([
    ['malformed JSON', '{"repo": {"host": '],
    ['an empty JSON body', ''],
  ])('answers %s with 400 INVALID_JSON, never 500', async (_what, payload) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/repositories/get',
      headers: { 'content-type': 'application/json', 'x-api-token': t.orgToken },
      payload,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_JSON');
  });

  it('answers a JSON array or string body with 400 saying a JSON object is needed', async () => {
    const res = await t.post('/v1/repositories/get', ['repo'], t.orgToken);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'VALIDATION_FAILED',
      message: 'The request body must be a JSON object',
    });
  });

  it('answers a body that is not JSON with 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/repositories/get',
        headers: { 'content-type': type, 'x-api-token': t.orgToken },
        payload: 'repo=web',
      });
      expect(res.statusCode).toBe(415);
      expect(res.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('answers a body over the limit with 413', async () => {
    const res = await t.post('/v1/repositories/get', { repo: REPO, padding: 'x'.repeat(4000) }, t.orgToken);
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message: expect.stringContaining('2048 bytes'),
    });
  });

  it('answers an unknown route with 404 ROUTE_NOT_FOUND in the envelope', async () => {
    const res = await t.post('/v1/no-such-endpoint', {}, t.orgToken);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('ROUTE_NOT_FOUND');
  });

  it('puts a request id on every response, success or error', async () => {
    const ok = await t.app.inject({ method: 'GET', url: '/healthz' });
    const bad = await t.post('/v1/repositories/get', {}, 'nope');
    const missing = await t.app.inject({ method: 'GET', url: '/nowhere' });
    for (const res of [ok, bad, missing]) expect(res.headers['x-request-id']).toMatch(UUID);
    // A path that is no dashboard page (web/pages.ts) is the envelope, not a redirect to sign-in;
    // `/nowhere` could be an organization's overview.
    const notPage = await t.app.inject({ method: 'GET', url: '/nowhere.html' });
    expect(notPage.statusCode).toBe(404);
    expect(notPage.json().error.code).toBe('ROUTE_NOT_FOUND');
    expect(notPage.headers['x-request-id']).toMatch(UUID);
    expect(ok.headers['x-request-id']).not.toBe(bad.headers['x-request-id']);
  });

  it('keeps a well-formed incoming x-request-id and replaces a hostile one', async () => {
    const kept = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'ci-run-42.7' },
    });
    expect(kept.headers['x-request-id']).toBe('ci-run-42.7');
    const replaced = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'evil\u0007value with spaces' },
    });
    expect(replaced.headers['x-request-id']).toMatch(UUID);
  });
});

describe('rate limiting per token', () => {
  const t = useTestApp({
    env: { MAINLINE_RATE_LIMIT: '1', MAINLINE_RATE_LIMIT_BURST: '3' },
    now: () => 1_000_000,
  });

  it('answers 429 with Retry-After once a token’s burst is spent, and leaves other tokens alone', async () => {
    const busy = await t.token('acme');
    const other = await t.token('acme');
    const codes: number[] = [];
    for (let i = 0; i < 4; i++)
      codes.push((await t.post('/v1/repositories/list', { page_query: { page_size: 1 } }, busy)).statusCode);
    expect(codes).toEqual([200, 200, 200, 429]);
    const limited = await t.post('/v1/repositories/list', { page_query: { page_size: 1 } }, busy);
    expect(limited.json().error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await t.post('/v1/repositories/list', { page_query: { page_size: 1 } }, other)).statusCode).toBe(
      200,
    );
  });
});

describe('internal errors', () => {
  it('answer 500 INTERNAL_ERROR without internals when the database is gone', async () => {
    const t = await buildTestApp();
    const token = await t.token('acme');
    await t.db.database.close();
    const res = await t.post('/v1/repositories/get', { repo: REPO }, token);
    expect(res.statusCode).toBe(500);
    const { error } = res.json();
    expect(error.code).toBe('INTERNAL_ERROR');
    expect(error.message).toBe(
      `Internal server error; quote request id ${res.headers['x-request-id']} when reporting it`,
    );
    await t.app.close();
    await t.db.cleanup();
  });
});
