import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { runCli, startServerProcess } from '../support/process.ts';

describe('the mainline command', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(() => db.cleanup());

  it('migrate creates the schema, then says it is up to date', async () => {
    const first = await runCli(['migrate'], db.env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('applied 0001_foundation');
    const again = await runCli(['migrate'], db.env);
    expect(again.stdout).toMatch(/is up to date \(\d+ migrations\)/);
  });

  it('token create prints only the token on stdout, once, and creates the organization', async () => {
    const res = await runCli(['token', 'create', '--org', 'acme', '--name', 'ci'], db.env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^ml_[A-Za-z0-9_-]{43}\n$/);
    expect(res.stderr).toContain('created organization "acme"');
    const second = await runCli(['token', 'create', '--org', 'acme'], db.env);
    expect(second.stderr).not.toContain('created organization');
    expect(second.stdout).not.toBe(res.stdout);
  });

  it('token create refuses a slug that is not lower-case letters, digits and dashes', async () => {
    const res = await runCli(['token', 'create', '--org', 'Acme Corp'], db.env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('"Acme Corp" is not a valid organization slug');
  });

  it('token list shows ids and prefixes but never a whole token; revoke makes the server refuse it', async () => {
    const created = JSON.parse(
      (await runCli(['token', 'create', '--org', 'globex', '--json'], db.env)).stdout,
    );
    const list = await runCli(['token', 'list', '--org', 'globex'], db.env);
    expect(list.stdout).toContain(created.id);
    expect(list.stdout).toContain(`${created.token.slice(0, 10)}…`);
    expect(list.stdout).not.toContain(created.token);

    // The CLI is another process: a server trusts a token for MAINLINE_TOKEN_CACHE_SECONDS (0 here) before
    // looking it up again (docs/security.md rule 4; test/integration/read-caches.test.ts proves the bound).
    const server = await startServerProcess({ ...db.env, MAINLINE_TOKEN_CACHE_SECONDS: '0' });
    const call = () =>
      fetch(`${server.url}/v1/repositories/list`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': created.token },
        body: JSON.stringify({ page_query: { page_size: 10 } }),
      });
    expect((await call()).status).toBe(200);
    expect((await runCli(['token', 'revoke', created.id], db.env)).code).toBe(0);
    expect((await call()).status).toBe(401);
    expect((await runCli(['token', 'list', '--org', 'globex'], db.env)).stdout).toMatch(/revoked \d{4}-/);
    const twice = await runCli(['token', 'revoke', created.id], db.env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('already revoked');
    expect(await server.stop()).toBe(0);
  });

  it('answers an unknown command with the usage text and exit code 2', async () => {
    const res = await runCli(['frobnicate'], db.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('unknown command "frobnicate"');
    expect(res.stderr).toContain('Usage: mainline');
  });
});

describe('mainline serve', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(() => db.cleanup());

  const bootstrap = {
    MAINLINE_BOOTSTRAP_ORG: 'ci-org',
    MAINLINE_BOOTSTRAP_TOKEN: 'bootstrap-token-for-tests-0001',
  };

  it('migrates on first start, creates the bootstrap token, and exits 0 on SIGTERM', async () => {
    const server = await startServerProcess({ ...db.env, ...bootstrap });
    const res = await fetch(`${server.url}/v1/repositories/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': bootstrap.MAINLINE_BOOTSTRAP_TOKEN },
      body: JSON.stringify({ repo: { host: 'github.com', owner: 'ci', name: 'app' } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(await server.stop('SIGTERM')).toBe(0);
    expect(server.logs.join('\n')).toContain('SIGTERM: shutting down');
  });

  it('keeps data and the bootstrap token across a restart without duplicating it', async () => {
    const server = await startServerProcess({ ...db.env, ...bootstrap });
    const res = await fetch(`${server.url}/v1/repositories/get`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': bootstrap.MAINLINE_BOOTSTRAP_TOKEN },
      body: JSON.stringify({ repo: { host: 'github.com', owner: 'CI', name: 'App' } }),
    });
    expect(res.status).toBe(200);
    expect(await server.stop()).toBe(0);
    const list = await runCli(['token', 'list', '--org', 'ci-org', '--json'], db.env);
    expect(JSON.parse(list.stdout)).toHaveLength(1);
  });

  it('refuses to start with a configuration error that names the variable', async () => {
    const res = await runCli(['serve'], { ...db.env, PORT: 'eighty' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('PORT must be a whole number from 0 to 65535, got "eighty"');
  });
});
