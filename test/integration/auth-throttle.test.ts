import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { revokeToken } from '../../src/app/tokens.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { buildTestApp, REPO } from '../support/app.ts';
import { listenOnLoopback } from '../support/raw-http.ts';
import { apiTokenId } from '../support/reads.ts';
import { useTestApp } from '../support/use-test-app.ts';

/**
 * The limit before authentication: failed API authentications and dashboard sign-ins are counted per
 * client address (MAINLINE_AUTH_FAIL_LIMIT per minute, MAINLINE_AUTH_FAIL_BURST at once); good tokens
 * are not counted and keep working from an address that is being limited.
 */
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('failed authentications per client address', () => {
  let clock = 1_000_000;
  const t = useTestApp({
    env: {
      MAINLINE_AUTH_FAIL_LIMIT: '6',
      MAINLINE_AUTH_FAIL_BURST: '3',
      MAINLINE_METRICS_TOKEN: 'metrics-secret',
    },
    now: () => clock,
    repository: true,
  });

  const getRepo = (token: string, remoteAddress: string): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method: 'POST',
      url: '/v1/repositories/get',
      remoteAddress,
      headers: { 'content-type': 'application/json', 'x-api-token': token },
      payload: JSON.stringify({ repo: REPO }),
    });
  const signIn = (token: string, remoteAddress: string) =>
    t.app.inject({
      method: 'POST',
      url: '/login',
      remoteAddress,
      headers: FORM,
      payload: new URLSearchParams({ token }).toString(),
    });

  it('answers 429 after the burst of bad tokens, while a good token from the same address still works', async () => {
    const address = '10.1.0.1';
    // Good requests are not counted: many of them leave the whole budget of failures.
    for (let i = 0; i < 5; i++) expect((await getRepo(t.orgToken, address)).statusCode).toBe(200);
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await getRepo(`bad-token-${i}`, address)).statusCode);
    expect(codes).toEqual([401, 401, 401, 429]);

    const limited = await getRepo('bad-token-x', address);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/json/);
    expect(limited.headers['x-request-id']).toBeDefined();
    expect(limited.headers['retry-after']).toBe('10');
    expect(limited.json()).toEqual({
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        message: 'Too many failed authentications from this address (limit 6 per minute); retry after 10 s',
      },
    });
    expect((await getRepo(t.orgToken, address)).statusCode).toBe(200);
  });

  it('leaves other addresses alone and lets the address try again once Retry-After has passed', async () => {
    expect((await getRepo('bad-token-y', '10.1.0.2')).statusCode).toBe(401);
    expect((await getRepo('bad-token-y', '10.1.0.1')).statusCode).toBe(429);
    clock += 10_000;
    expect((await getRepo('bad-token-z', '10.1.0.1')).statusCode).toBe(401);
    expect((await getRepo('bad-token-z', '10.1.0.1')).statusCode).toBe(429);
  });

  it('counts an IPv6 client by its /64, so it cannot make up fresh addresses', async () => {
    const codes: number[] = [];
    for (let i = 1; i <= 4; i++) codes.push((await getRepo('bad-v6', `2001:db8:1:2::${i}`)).statusCode);
    expect(codes).toEqual([401, 401, 401, 429]);
    expect((await getRepo('bad-v6', '2001:db8:1:3::1')).statusCode).toBe(401);
  });

  it('stops a revoked token that had been good at an address being limited', async () => {
    const address = '10.1.0.3';
    const token = await t.token('acme');
    expect((await getRepo(token, address)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await getRepo(`bad-${i}`, address)).statusCode).toBe(401);
    expect((await getRepo(token, address)).statusCode).toBe(200);
    await revokeToken(t.db.database.db, await apiTokenId(t, token), clock, t.caches.tokens);
    expect((await getRepo(token, address)).json().error.code).toBe('INVALID_TOKEN');
    expect((await getRepo(token, address)).statusCode).toBe(429);
  });

  it('counts wrong /metrics tokens the same way', async () => {
    const metrics = (authorization: string) =>
      t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.0.4', headers: { authorization } });
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await metrics('Bearer wrong')).statusCode);
    expect(codes).toEqual([401, 401, 401, 429]);
    expect((await metrics('Bearer metrics-secret')).statusCode).toBe(200);
  });

  it('limits dashboard sign-ins per address, good or bad, with Retry-After', async () => {
    const address = '10.1.0.5';
    expect((await signIn(t.orgToken, address)).statusCode).toBe(303);
    expect((await signIn('not-a-token', address)).statusCode).toBe(401);
    expect((await signIn(t.orgToken, address)).statusCode).toBe(303);
    const limited = await signIn(t.orgToken, address);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('10');
    expect(limited.headers['set-cookie']).toBeUndefined();
    expect(limited.body).toContain('Too many sign-in attempts from this address; try again in 10 seconds.');
    expect((await signIn(t.orgToken, '10.1.0.6')).statusCode).toBe(303);
  });
});

describe('the client address behind a proxy', () => {
  const run = async (trustProxy: string | undefined) => {
    const t = await buildTestApp({
      MAINLINE_AUTH_FAIL_LIMIT: '6',
      MAINLINE_AUTH_FAIL_BURST: '2',
      ...(trustProxy === undefined ? {} : { MAINLINE_TRUST_PROXY: trustProxy }),
    });
    try {
      const port = await listenOnLoopback(t.app);
      const from = async (forwardedFor: string) =>
        (
          await fetch(`http://127.0.0.1:${port}/v1/repositories/get`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-api-token': 'bad',
              'x-forwarded-for': forwardedFor,
            },
            body: JSON.stringify({ repo: REPO }),
          })
        ).status;
      return [
        await from('203.0.113.1'),
        await from('203.0.113.1'),
        await from('203.0.113.1'),
        await from('203.0.113.2'),
      ];
    } finally {
      await t.close();
    }
  };

  it('is the socket peer by default: X-Forwarded-For cannot spread one client over many addresses', async () => {
    expect(await run(undefined)).toEqual([401, 401, 429, 429]);
  });

  it('is taken from X-Forwarded-For when the peer is a proxy named in MAINLINE_TRUST_PROXY', async () => {
    expect(await run('127.0.0.1')).toEqual([401, 401, 429, 401]);
  });

  it('refuses a MAINLINE_TRUST_PROXY that is not a list of addresses', () => {
    expect(() => loadConfig({ MAINLINE_TRUST_PROXY: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ MAINLINE_TRUST_PROXY: '10.0.0.0/33' })).toThrow(/MAINLINE_TRUST_PROXY/);
    expect(loadConfig({ MAINLINE_TRUST_PROXY: '10.0.0.0/8, ::1,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '::1',
      'loopback',
    ]);
    expect(() => loadConfig({ MAINLINE_AUTH_FAIL_ADDRESSES: '5' })).toThrow(/MAINLINE_AUTH_FAIL_ADDRESSES/);
  });
});
