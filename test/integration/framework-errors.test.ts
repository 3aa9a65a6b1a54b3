import { beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../support/app.ts';
import { listenOnLoopback, type RawResponse, rawRequest } from '../support/raw-http.ts';
import { useTestApp } from '../support/use-test-app.ts';

/**
 * Errors raised by the framework or by Node's HTTP parser, before or around the routes, answered
 * through a real listening server on loopback: every one must be the JSON error envelope with an
 * x-request-id, as the README promises for every error.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectEnvelope(res: RawResponse, status: number, code: string): { code: string; message: string } {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  const body = JSON.parse(res.body) as { error: { code: string; message: string } };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(10);
  return body.error;
}

describe('framework errors through a real server', () => {
  const t = useTestApp({ env: { MAINLINE_BODY_LIMIT: '2048', MAINLINE_REQUEST_TIMEOUT: '1' } });
  let port: number;

  const post = (path: string, headers: string[], body: string) =>
    rawRequest(
      port,
      [
        `POST ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Connection: close',
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...headers,
        '',
        body,
      ].join('\r\n'),
    );

  beforeAll(async () => {
    port = await listenOnLoopback(t.app);
  });

  it('answers headers larger than Node reads with 431 REQUEST_HEADERS_TOO_LARGE in the envelope', async () => {
    const res = await rawRequest(
      port,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    const error = expectEnvelope(res, 431, 'REQUEST_HEADERS_TOO_LARGE');
    expect(error.message).toMatch(/headers are larger than the \d+ bytes/);
    expect(res.headers['x-request-id']).toMatch(UUID);
  });

  it('answers a malformed request line with 400 BAD_REQUEST in the envelope', async () => {
    for (const line of ['GARBAGE', 'GET /healthz HTTP/9', 'G@T /healthz HTTP/1.1']) {
      const res = await rawRequest(port, `${line}\r\nHost: 127.0.0.1\r\n\r\n`);
      const error = expectEnvelope(res, 400, 'BAD_REQUEST');
      expect(error.message).toMatch(/not valid HTTP\/1\.1/);
    }
  });

  it('answers an unreadable Content-Length with 400 in the envelope', async () => {
    const res = await rawRequest(
      port,
      'POST /v1/repositories/get HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n',
    );
    expectEnvelope(res, 400, 'BAD_REQUEST');
  });

  it('answers a request whose body stops arriving with 408 REQUEST_TIMEOUT quoting its request id', async () => {
    const started = Date.now();
    const res = await rawRequest(
      port,
      [
        'POST /v1/repositories/get HTTP/1.1',
        'Host: 127.0.0.1',
        'Content-Type: application/json',
        'Content-Length: 100',
        `x-api-token: ${t.orgToken}`,
        'x-request-id: stalled-body-1',
        '',
        '{"repo": ',
      ].join('\r\n'),
    );
    const error = expectEnvelope(res, 408, 'REQUEST_TIMEOUT');
    expect(error.message).toContain('1 s');
    expect(res.headers['x-request-id']).toBe('stalled-body-1');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('answers a request whose headers never end with 408 in the envelope', async () => {
    const res = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expectEnvelope(res, 408, 'REQUEST_TIMEOUT');
    expect(res.headers['x-request-id']).toMatch(UUID);
  });

  it('answers a body over the limit with 413 in the envelope', async () => {
    const body = JSON.stringify({ repo: REPO, padding: 'x'.repeat(4000) });
    const res = await post(
      '/v1/repositories/get',
      ['Content-Type: application/json', `x-api-token: ${t.orgToken}`],
      body,
    );
    expect(expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE').message).toContain('2048 bytes');
  });

  it('counts a chunked JSON body (no Content-Length) as it arrives: 413 past the limit', async () => {
    const body = JSON.stringify({ repo: REPO, padding: 'x'.repeat(4000) });
    const chunks = [body.slice(0, 1500), body.slice(1500, 3000), body.slice(3000)]
      .map((c) => `${Buffer.byteLength(c).toString(16)}\r\n${c}\r\n`)
      .join('');
    const res = await rawRequest(
      port,
      [
        'POST /v1/repositories/get HTTP/1.1',
        'Host: 127.0.0.1',
        'Connection: close',
        'Transfer-Encoding: chunked',
        'Content-Type: application/json',
        `x-api-token: ${t.orgToken}`,
        '',
        `${chunks}0\r\n\r\n`,
      ].join('\r\n'),
    );
    expect(expectEnvelope(res, 413, 'PAYLOAD_TOO_LARGE').message).toContain('2048 bytes');
  });

  it('answers a body that is not JSON with 415 in the envelope', async () => {
    const res = await post(
      '/v1/repositories/get',
      ['Content-Type: text/xml', `x-api-token: ${t.orgToken}`],
      '<repo/>',
    );
    expectEnvelope(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers malformed JSON with 400 INVALID_JSON in the envelope', async () => {
    const res = await post(
      '/v1/repositories/get',
      ['Content-Type: application/json', `x-api-token: ${t.orgToken}`],
      '{"repo": {',
    );
    expectEnvelope(res, 400, 'INVALID_JSON');
  });

  it('answers a malformed percent-escape in the path with 400 in the envelope', async () => {
    const res = await rawRequest(
      port,
      'GET /v1/%E0%A4%A HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expectEnvelope(res, 400, 'BAD_REQUEST');
  });

  it('answers an unknown path with 404 ROUTE_NOT_FOUND in the envelope', async () => {
    const res = await post(
      '/v1/no-such-endpoint',
      ['Content-Type: application/json', `x-api-token: ${t.orgToken}`],
      '{}',
    );
    expectEnvelope(res, 404, 'ROUTE_NOT_FOUND');
  });

  it('answers a known path asked with another method with 405 METHOD_NOT_ALLOWED and Allow', async () => {
    for (const method of ['GET', 'DELETE', 'PROPFIND']) {
      const res = await rawRequest(
        port,
        `${method} /v1/repositories/get HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      const error = expectEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers['allow']).toBe('POST');
      expect(error.message).toBe(
        `${method} is not allowed on /v1/repositories/get; use POST (see /docs for the API)`,
      );
    }
    const health = await rawRequest(
      port,
      'POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
    );
    expectEnvelope(health, 405, 'METHOD_NOT_ALLOWED');
    expect(health.headers['allow']).toBe('GET, HEAD');
  });

  const get = (path: string, method = 'GET', headers: string[] = []) =>
    rawRequest(
      port,
      [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers, '', ''].join('\r\n'),
    );

  it('answers a GET of a path that is no dashboard page with 404 ROUTE_NOT_FOUND, not a redirect to sign-in', async () => {
    // One-segment paths used to be taken for an organization's overview (`/:org`) and sent to /login.
    for (const path of [
      '/nowhere.html',
      '/favicon.ico',
      '/robots.txt',
      '/.env',
      '/v1',
      '/-acme',
      `/${'a'.repeat(65)}`,
      '/api/v1/repositories/list',
      '/acme/settings',
      '/acme/repos',
      '/acme/repos/github.com/acme',
      '/acme/flaky-tests/x',
    ]) {
      const res = await get(path);
      expect(res.headers['location'], path).toBeUndefined();
      const error = expectEnvelope(res, 404, 'ROUTE_NOT_FOUND');
      expect(error.message).toBe(`No route GET ${path}; see /docs for the API`);
      expect(res.headers['x-request-id']).toMatch(UUID);
    }
    // HEAD too, and signed in (a token is no session) or not.
    expect((await get('/favicon.ico', 'HEAD')).status).toBe(404);
    expect((await get('/favicon.ico', 'GET', [`x-api-token: ${t.orgToken}`])).status).toBe(404);
  });

  it('answers another method on a path that is no page with 404, and on a page with 405 and Allow', async () => {
    const posted = (path: string) => post(path, ['Content-Type: application/json'], '{}');
    expectEnvelope(await posted('/favicon.ico'), 404, 'ROUTE_NOT_FOUND');
    expectEnvelope(await posted('/acme/repos/github.com/acme/web'), 405, 'METHOD_NOT_ALLOWED');
    const overview = await posted('/acme');
    expectEnvelope(overview, 405, 'METHOD_NOT_ALLOWED');
    expect(overview.headers['allow']).toBe('GET, HEAD');
    // A form's path is also a repository page, read with an owner `acme/web/tests/t1` named `flag`.
    const action = await get('/acme/repos/github.com/acme/web/tests/t1/flag', 'DELETE');
    expectEnvelope(action, 405, 'METHOD_NOT_ALLOWED');
    expect(action.headers['allow']).toBe('GET, HEAD, POST');
    expectEnvelope(await get('/favicon.ico/repos/github.com/acme/web', 'DELETE'), 404, 'ROUTE_NOT_FOUND');
  });

  it('still sends a visitor without a session from a dashboard page to sign in', async () => {
    for (const path of [
      '/acme',
      '/ACME',
      '/no-such-org',
      '/acme/repos/github.com/acme/web',
      '/acme/repos/gitlab.com/group/sub/web/tests/t1',
      '/acme/repos/github.com/acme/web/queues/release%2F1.0/prs/7',
      // The link trunk-analytics-cli prints for a test.
      '/acme/flaky-tests/test/8d3f?repo=acme%2Fweb',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(303);
      expect(res.headers['location'], path).toBe(`/login?next=${encodeURIComponent(path)}`);
    }
  });

  it('keeps serving after all of these', async () => {
    const res = await rawRequest(
      port,
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    );
    expect(res.status).toBe(200);
  });
});
