// repositories/list, repositories/get and get-repository-settings answer from kept bytes (issue 25):
// a list page by the organization's repository count (read again only once something was committed,
// on SQLite), a repository for good (its identity never changes), its settings while the database is
// unchanged (SQLite; PostgreSQL reads the settings row every time). What may never change: a write
// through the API, by this server or by another one on the same database (its own connection, its
// own caches), is in this server's very next answer.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { buildApp } from '../../src/http/app.ts';
import { REPO } from '../support/app.ts';
import { replicaHandle } from '../support/replica.ts';
import { sentStatements } from '../support/statements.ts';
import { useTestApp } from '../support/use-test-app.ts';

type Json = Record<string, unknown>;
const scope = { repo: REPO, org_url_slug: 'acme' };
/** Sorts before REPO (host, owner, name order), so it shifts every page after it. */
const FIRST = { host: 'github.com', owner: 'aaa', name: 'first' };
const LATER = { host: 'gitlab.com', owner: 'acme', name: 'later' };

describe('repository reads kept while nothing changed', () => {
  const t = useTestApp({ repository: true });
  /** Another server on the same database: its own connection, its own caches. */
  let other: { app: FastifyInstance; database: Database };
  const sqlite = () => t.db.env['DATABASE_URL'] === undefined;

  const send = (app: FastifyInstance, url: string, body: object, token = t.orgToken) =>
    app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'x-api-token': token },
      payload: JSON.stringify(body),
    });
  const post = async (app: FastifyInstance, url: string, body: object, token = t.orgToken) => {
    const res = await send(app, url, body, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Json;
  };
  const list = (app: FastifyInstance, pageQuery: object = { page_size: 10 }, token = t.orgToken) =>
    post(app, '/v1/repositories/list', { page_query: pageQuery }, token);
  const settings = async (app: FastifyInstance) =>
    (await post(app, '/v1/flaky-tests/get-repository-settings', scope))['settings'] as Json;
  const update = (app: FastifyInstance, patch: object) =>
    post(app, '/v1/flaky-tests/update-repository-settings', { ...scope, settings: patch });
  const names = (answer: Json) => (answer['repositories'] as Json[]).map((r) => `${r['owner']}/${r['name']}`);
  const total = (answer: Json) => (answer['page'] as Json)['total_rows'];

  beforeAll(async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', MAINLINE_RATE_LIMIT: '0', ...t.db.env });
    const database = replicaHandle(t.db);
    other = { app: await buildApp({ config, database }), database };
  });
  afterAll(async () => {
    await other?.app.close();
    await other?.database.close().catch(() => undefined);
  });

  it('answers warm reads without asking the database on SQLite; on PostgreSQL a count and a settings row', async () => {
    const warm = {
      list: await list(t.app),
      get: await post(t.app, '/v1/repositories/get', scope),
      settings: await settings(t.app),
    };
    const again = async () => ({
      list: await list(t.app),
      get: await post(t.app, '/v1/repositories/get', scope),
      settings: await settings(t.app),
    });
    let answers: Awaited<ReturnType<typeof again>> | undefined;
    const sent = await sentStatements(t.db.database.db, async () => {
      answers = await again();
    });
    expect(answers).toEqual(warm);
    expect(sent).toHaveLength(sqlite() ? 0 : 2);
    // The same answers as a server that kept nothing.
    expect(answers).toEqual({
      list: await list(other.app),
      get: await post(other.app, '/v1/repositories/get', scope),
      settings: await settings(other.app),
    });
  });

  it("puts a repository another server creates in this server's next list and get", async () => {
    expect(names(await list(t.app))).toEqual(['acme/web']);
    const missing = await send(t.app, '/v1/repositories/get', { ...scope, repo: FIRST });
    expect(missing.statusCode).toBe(404);
    await post(other.app, '/v1/repositories/create', { repo: FIRST });
    const after = await list(t.app);
    expect(names(after)).toEqual(['aaa/first', 'acme/web']);
    expect(total(after)).toBe(2);
    const found = await post(t.app, '/v1/repositories/get', { ...scope, repo: FIRST });
    expect((found['repository'] as Json)['name']).toBe('first');
    expect(after).toEqual(await list(other.app));
  });

  it('gives a page reached by its token anew once a repository is added before it', async () => {
    const first = await list(t.app, { page_size: 1 });
    const token = (first['page'] as Json)['next_page_token'] as string;
    expect(token).not.toBe('');
    const second = await list(t.app, { page_size: 1, page_token: token });
    expect(names(second)).toEqual(['acme/web']);
    expect(total(second)).toBe(2);
    await post(other.app, '/v1/repositories/create', { repo: LATER });
    const again = await list(t.app, { page_size: 1, page_token: token });
    expect(names(again)).toEqual(['acme/web']);
    expect(total(again)).toBe(3);
    expect((again['page'] as Json)['next_page_token']).not.toBe('');
    expect(again).toEqual(await list(other.app, { page_size: 1, page_token: token }));
  });

  it("puts another server's quarantine switches and monitors in this server's next settings answer", async () => {
    const before = await settings(t.app);
    expect(before['quarantining_enabled']).toBe(true);
    await update(other.app, { quarantining_enabled: false, auto_quarantine_flaky: false });
    const switched = await settings(t.app);
    expect(switched['quarantining_enabled']).toBe(false);
    expect(switched['auto_quarantine_flaky']).toBe(false);
    await update(other.app, { monitors: { failure_count: [] } });
    const monitors = (await settings(t.app))['monitors'] as Json;
    expect(monitors['failure_count']).toEqual([]);
    expect(await settings(t.app)).toEqual(await settings(other.app));
  });

  it('puts changes this server makes in its own next answers', async () => {
    await update(t.app, { quarantining_enabled: true, ticket_url_template: 'https://tickets.example/{id}' });
    const now = await settings(t.app);
    expect(now['quarantining_enabled']).toBe(true);
    expect(now['ticket_url_template']).toBe('https://tickets.example/{id}');
    await post(t.app, '/v1/repositories/create', {
      repo: { host: 'github.com', owner: 'zed', name: 'last' },
    });
    expect(names(await list(t.app))).toEqual(['aaa/first', 'acme/web', 'zed/last', 'acme/later']);
    expect(await settings(t.app)).toEqual(await settings(other.app));
  });

  it("never gives one organization's kept answers to another", async () => {
    const warm = await list(t.app);
    expect(total(warm)).toBe(4);
    const beta = await t.token('beta');
    const theirs = await list(t.app, { page_size: 10 }, beta);
    expect(theirs['repositories']).toEqual([]);
    const theirScope = { repo: REPO, org_url_slug: 'beta' };
    expect((await send(t.app, '/v1/repositories/get', theirScope, beta)).statusCode).toBe(404);
    const res = await send(t.app, '/v1/flaky-tests/get-repository-settings', theirScope, beta);
    expect(res.statusCode).toBe(404);
  });
});
