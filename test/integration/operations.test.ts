import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { buildTestApp, REPO } from '../support/app.ts';
import { useTestApp } from '../support/use-test-app.ts';

describe('operations endpoints', () => {
  const t = useTestApp();

  it('GET /v1/status answers in Trunk’s shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/status' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      overallStatus: { type: 'up', color: 'green', overallStatusDescription: 'All systems operational' },
      statuses: [
        { name: 'API', color: 'green', statusDescription: 'Operational' },
        { name: 'Database', color: 'green', statusDescription: 'Operational' },
      ],
    });
  });

  it('GET /healthz and /readyz answer ok and name the database engine', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', database: t.db.database.engine });
  });

  it('GET /metrics counts requests per route template and status, with latency histograms', async () => {
    const token = await t.token('acme');
    await t.post('/v1/repositories/get', { repo: REPO }, token);
    await t.post('/v1/repositories/get', { repo: REPO }, token);
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toContain(
      'mainline_http_requests_total{method="POST",route="/v1/repositories/get",status_code="404"} 2',
    );
    expect(res.body).toMatch(
      /mainline_http_request_duration_seconds_bucket\{le="0.1",method="POST",route="\/v1\/repositories\/get"\} 2/,
    );
  });

  it('GET /openapi.json is a valid OpenAPI 3 document generated from the route schemas', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeDefined();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/status',
        '/v1/repositories/create',
        '/v1/repositories/get',
        '/v1/repositories/list',
        '/healthz',
        '/readyz',
      ]),
    );
    const list = doc.paths['/v1/repositories/list'].post;
    expect(
      list.requestBody.content['application/json'].schema.properties.page_query.properties.page_size,
    ).toMatchObject({
      minimum: 1,
      maximum: 100,
    });
  });

  it('GET /docs serves the interactive documentation', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });

  it('reports the database as down in /v1/status and /readyz when it is unreachable', async () => {
    const broken = await buildTestApp();
    await broken.db.database.close();
    const status = (await broken.app.inject({ method: 'GET', url: '/v1/status' })).json();
    expect(status.overallStatus).toMatchObject({ type: 'impacted', color: 'red' });
    expect(status.statuses).toContainEqual({
      name: 'Database',
      color: 'red',
      statusDescription: 'Unreachable',
    });
    const ready = await broken.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().error.code).toBe('SERVICE_UNAVAILABLE');
    await broken.app.close();
    await broken.db.cleanup();
  });
});

describe('metrics behind a token', () => {
  it('answers 401 without the configured bearer token and 200 with it', async () => {
    const t = await buildTestApp({ MAINLINE_METRICS_TOKEN: 'scrape-secret' });
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
    const ok = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: 'Bearer scrape-secret' },
    });
    expect(ok.statusCode).toBe(200);
    await t.close();
  });
});
