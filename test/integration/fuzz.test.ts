import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../src/web/paths.ts';
import { buildTestApp } from '../support/app.ts';
import { csrfOf, getPage, signIn } from '../support/dashboard.ts';
import {
  type JsonSchema,
  listRoutes,
  type Operation,
  openApiOperations,
  routeKey,
} from '../support/routes.ts';
import { seedTenants, type Tenants } from '../support/seed.ts';
import { multipart } from '../support/upload.ts';
import { useTestApp } from '../support/use-test-app.ts';

/**
 * Property-based fuzzing of every endpoint, generated from the app itself: JSON bodies from each
 * operation's schema in the OpenAPI document (valid-shaped with hostile values, and mutated), raw
 * bodies and content types for every route that takes a body, query strings for GET routes.
 * Property: the server answers every request in time with 2xx, 3xx (dashboard redirects) or 4xx —
 * never a 5xx, except a 503 the route documents (/webhooks/github without GitHub configured) — and
 * every API error (/v1, /webhooks) is the JSON envelope with a request id. Runs against a seeded tenant (see support/seed.ts), so bodies that name
 * the seeded repository, queue, tests and PRs reach the handlers' real work.
 *
 * Reproduce a failure with the seed printed in the error: FUZZ_SEED=<seed> (FUZZ_RUNS scales the runs).
 */
const SEED = Number(process.env['FUZZ_SEED'] ?? 20261102);
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 40);
const REQUEST_TIMEOUT_MS = 10_000;

const served = await (async () => {
  const t = await buildTestApp();
  try {
    return { routes: listRoutes(t.app), operations: openApiOperations(t.app) };
  } finally {
    await t.close();
  }
})();
const jsonOperations = served.operations.filter((o) => o.body !== undefined);
const bodyRoutes = served.routes.filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method));
const getRoutes = served.routes.filter((r) => r.method === 'GET' && !r.url.startsWith('/docs'));
/** 5xx answers a route documents on purpose (e.g. 503 from /readyz, or /webhooks/github when GitHub is not configured). */
const documented5xx = new Map(
  served.operations.map((o) => [routeKey(o), o.responses.filter((c) => c >= 500 && c !== 500)]),
);

/** Strings chosen to break things: empty, huge, control characters, NUL, lone surrogates, paths, SQL. */
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff\ud800',
    '..',
    '../../../etc/passwd',
    '/',
    '.git',
    "'; drop table repositories; --",
    '%s%n%x',
    '$' + '{7*7}',
    '<script>alert(1)</script>',
    '\u202e\u2066',
    'ﷺ𒐫𝕏🏳️‍🌈',
    'x'.repeat(300),
    'x'.repeat(70_000),
  ),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: 'grapheme', maxLength: 64 }),
);
const hostileNumber = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    -0,
    0.5,
    -2_147_483_649,
    4_294_967_296,
    2 ** 53 + 2,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    5e-324,
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

/** Values the seeded tenant holds, by property name, so generated bodies also hit real rows. */
function hints(s: Tenants): Record<string, unknown[]> {
  return {
    repo: [s.a.repo, { ...s.a.repo, owner: s.a.repo.owner.toUpperCase() }],
    org_url_slug: [s.a.slug],
    orgUrlSlug: [s.a.slug],
    targetBranch: ['main'],
    test_id: [s.a.flakyTestId, s.a.pinnedTestId],
    test_case_id: [s.a.flakyTestId],
    testRunId: [s.a.runId],
    id: [s.a.webhookId],
    pr: [{ number: 1 }, { number: 2 }, { number: 1, sha: s.a.prHeadSha }],
    number: [1, 2],
    sha: [s.a.testBranchSha, s.a.prHeadSha],
    headBranch: ['feature-1', 'feature-2'],
    baseBranch: ['main'],
    url: ['http://127.0.0.1:9/fuzz'],
    page_token: [''],
  };
}

/** An arbitrary for values of `schema`: mostly within its constraints, sometimes hostile of the right type. */
function arbitrary(
  schema: JsonSchema,
  known: Record<string, unknown[]>,
  name = '',
  depth = 0,
): fc.Arbitrary<unknown> {
  const hinted = known[name];
  const own = shape(schema, known, depth);
  return hinted !== undefined
    ? fc.oneof({ arbitrary: fc.constantFrom(...hinted), weight: 3 }, { arbitrary: own, weight: 1 })
    : own;
}

function shape(schema: JsonSchema, known: Record<string, unknown[]>, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return fc.oneof(...union.map((u) => shape(u, known, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const sometimes = (good: fc.Arbitrary<unknown>, bad: fc.Arbitrary<unknown>) =>
    fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: bad, weight: 1 });
  switch (type) {
    case 'object': {
      const props = schema.properties ?? {};
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(props)) model[key] = arbitrary(sub, known, key, depth + 1);
      return fc.record(model, { requiredKeys: (schema.required ?? []).filter((k) => k in props) });
    }
    case 'array': {
      const max = Math.min(schema.maxItems ?? 4, 4);
      const min = Math.min(schema.minItems ?? 0, max);
      const items = schema.items ?? {};
      return sometimes(
        fc.array(depth > 6 ? fc.constant(null) : shape(items, known, depth + 1), {
          minLength: min,
          maxLength: max,
        }),
        fc.constantFrom(
          [],
          Array.from({ length: 1000 }, () => null),
        ),
      );
    }
    case 'string': {
      const max = Math.min(schema.maxLength ?? 40, 40);
      const min = Math.min(schema.minLength ?? 0, max);
      let good: fc.Arbitrary<string>;
      if (schema.format === 'uuid') good = fc.uuid();
      else if (schema.format === 'date-time')
        good = fc
          .date({ min: new Date(0), max: new Date(Date.UTC(2100, 0)), noInvalidDate: true })
          .map((d) => d.toISOString());
      else if (schema.pattern !== undefined)
        good = fc
          .stringMatching(new RegExp(schema.pattern))
          .map((x) => (x.length > 255 ? x.slice(0, 255) : x));
      else good = fc.string({ unit: 'grapheme', minLength: min, maxLength: max });
      return sometimes(good, hostileString);
    }
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? -1_000_000;
      const max = schema.maximum ?? schema.exclusiveMaximum ?? 1_000_000;
      const good =
        type === 'integer'
          ? fc.integer({ min, max: Math.min(max, Number.MAX_SAFE_INTEGER) })
          : fc.double({ min, max, noNaN: true });
      return sometimes(good, hostileNumber);
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A body with every property present, hinted values where known, smallest valid values elsewhere. */
function baseBody(schema: JsonSchema, known: Record<string, unknown[]>, name = ''): unknown {
  const hinted = known[name];
  if (hinted !== undefined) return structuredClone(hinted[0]);
  if (schema.const !== undefined) return schema.const;
  if (schema.enum !== undefined) return schema.enum[0];
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return baseBody(union[0]!, known, name);
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, v]) => [k, baseBody(v, known, k)]),
      );
    case 'array':
      return (schema.minItems ?? 0) > 0 ? [baseBody(schema.items ?? {}, known)] : [];
    case 'string':
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (schema.format === 'date-time') return new Date(Date.UTC(2026, 10, 2, 9)).toISOString();
      if (schema.pattern !== undefined)
        return fc.sample(fc.stringMatching(new RegExp(schema.pattern)), { seed: SEED, numRuns: 1 })[0];
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, 1);
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** encodeURIComponent, with lone surrogates (which it refuses) replaced first. */
function uriEscape(x: string): string {
  return encodeURIComponent(
    x.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
  );
}

/** Paths of every leaf (non-object, non-array value) of a value. */
function leafPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leafPaths(v, [...prefix, i]));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...prefix, k]));
  return [prefix];
}

function getPath(value: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value);
}

function setPath(value: unknown, path: readonly (string | number)[], leaf: unknown): unknown {
  const copy = structuredClone(value);
  const parent = getPath(copy, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = leaf;
  return copy;
}

/** Paths of every object member in a value (for mutations). */
function memberPaths(value: unknown, prefix: string[] = []): string[][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [[...prefix, k], ...memberPaths(v, [...prefix, k])]);
}

function nested(depth: number, leaf: 'array' | 'object'): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = leaf === 'array' ? [v] : { a: v };
  return v;
}

/** A valid-shaped body changed in one way: a member removed, retyped, nested deeply; extras; not an object. */
function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    hostileString,
    hostileNumber,
    fc.constantFrom(null, true, [], {}, [{}], JSON.parse('{"__proto__":{"admin":true}}') as unknown),
    fc.integer({ min: 50, max: 3000 }).map((d) => nested(d, 'array')),
    fc.integer({ min: 50, max: 3000 }).map((d) => nested(d, 'object')),
  );
  return fc
    .tuple(
      valid,
      fc.nat(),
      fc.constantFrom('remove', 'retype', 'extra', 'replace'),
      wrong,
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
    )
    .map(([body, pick, how, value, extra]) => {
      const copy = structuredClone(body) as Record<string, unknown>;
      const paths = memberPaths(copy);
      if (how === 'replace' || paths.length === 0) return value;
      if (how === 'extra') return { ...extra, ...copy, constructor: { prototype: { polluted: 1 } } };
      const path = paths[pick % paths.length]!;
      let parent = copy as Record<string, unknown>;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string, unknown>;
      const last = path[path.length - 1]!;
      if (how === 'remove') delete parent[last];
      else parent[last] = value;
      return copy;
    });
}

function withTimeout<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer in ${REQUEST_TIMEOUT_MS} ms`)),
      REQUEST_TIMEOUT_MS,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The property every answer must have: 2xx, 3xx (dashboard redirects) or 4xx, or a 5xx the route
 * documents; the API's errors (/v1, /webhooks) are the JSON envelope, the dashboard's are pages.
 */
function assertSane(what: string, res: LightMyRequestResponse, route?: string): void {
  const context = `${what} → ${res.statusCode} ${res.body.slice(0, 500)}`;
  const allowed = route === undefined ? [] : (documented5xx.get(route) ?? []);
  if ((res.statusCode >= 500 && !allowed.includes(res.statusCode)) || res.statusCode < 200)
    throw new Error(`not 2xx/3xx/4xx: ${context}`);
  const api = /^(POST|GET|PUT|PATCH|DELETE) \/(v1|webhooks)\//.test(what);
  if (res.statusCode >= 400 && api) {
    if (!String(res.headers['content-type']).startsWith('application/json'))
      throw new Error(`4xx not JSON: ${context}`);
    const body = JSON.parse(res.body) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code !== 'string' || typeof body.error.message !== 'string')
      throw new Error(`4xx without the error envelope: ${context}`);
  } else if (String(res.headers['content-type']).startsWith('application/json')) {
    JSON.parse(res.body);
  }
  if (typeof res.headers['x-request-id'] !== 'string') throw new Error(`no x-request-id: ${context}`);
}

const params = { seed: SEED, numRuns: RUNS, endOnFailure: true } as const;

describe('fuzzing every endpoint', () => {
  let s: Tenants;
  const inject = (what: string, opts: InjectOptions) =>
    withTimeout(what, s.t.app.inject(opts) as unknown as Promise<LightMyRequestResponse>);
  const json = (op: Operation, payload: string, headers: Record<string, string> = {}) =>
    inject(`${routeKey(op)} ${payload.slice(0, 200)}`, {
      method: op.method as 'POST',
      url: op.url,
      headers: { 'content-type': 'application/json', 'x-api-token': s.a.token, ...headers },
      payload,
    });

  /** A multipart upload as A: `meta` as its meta part, then the files. */
  const upload = (what: string, meta: unknown, files: readonly { name: string; content: string }[]) => {
    const body = multipart(meta, files);
    return inject(what, {
      method: 'POST',
      url: '/v1/test-results/upload',
      headers: { 'content-type': body.contentType, 'x-api-token': s.a.token },
      payload: body.payload,
    });
  };
  const ONE_TEST = [{ name: 'a.xml', content: '<testsuite><testcase name="t"/></testsuite>' }];

  /** A's dashboard session (cookie header) and its CSRF token. */
  let session = '';
  let csrf = '';

  beforeAll(async () => {
    s = await seedTenants();
    session = await signIn(s.t, s.a.token);
    csrf = csrfOf((await getPage(s.t, paths.org(s.a.slug), session)).body);
  });
  afterAll(() => s.scenario.close());

  it('finds the JSON endpoints in the OpenAPI document, and signs in to the dashboard', () => {
    expect(session).toMatch(/^mainline_session=./);
    expect(csrf).not.toBe('');
    expect(jsonOperations.map(routeKey)).toContain('POST /v1/updateQueue');
    expect(bodyRoutes.map(routeKey)).toContain('PUT /v1/metrics/bundle-uploads/:id');
  });

  it.each(jsonOperations.map((op) => [routeKey(op), op] as const))(
    '%s: schema-shaped and mutated bodies get 2xx or a 4xx envelope',
    async (_name, op) => {
      const valid = arbitrary(op.body!, hints(s));
      await fc.assert(
        fc.asyncProperty(fc.oneof(valid, mutated(valid)), async (body) => {
          const payload = JSON.stringify(body) ?? 'null';
          assertSane(`${routeKey(op)} ${payload.slice(0, 300)}`, await json(op, payload), routeKey(op));
        }),
        params,
      );
    },
  );

  it.each(bodyRoutes.map((route) => [routeKey(route), route] as const))(
    '%s: raw bodies, broken JSON and wrong content types get 2xx or a 4xx envelope',
    async (_name, route) => {
      let url = route.url
        .replace(/:org/g, s.a.slug)
        .replace(/:(\w+)/g, () => s.a.webhookId)
        .replace(/\*$/, `${paths.test(s.a.slug, s.a.repo, s.a.flakyTestId).split('/repos/')[1]}/flag`);
      if (route.method === 'PUT') {
        // A real signed URL, so the bytes reach the bundle reader (nothing random ingests, so it stays unused).
        const created = await s.t.post(
          '/v1/metrics/createBundleUpload',
          { repo: s.a.repo, orgUrlSlug: s.a.slug },
          s.a.token,
        );
        const signed = new URL(created.json().url);
        url = signed.pathname + signed.search;
      }
      const contentType = fc.constantFrom(
        'application/json',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'multipart/form-data',
        'multipart/form-data; boundary=',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
        'application/zstd',
        '*/*',
        ';;;',
        'application/json, text/plain',
      );
      const body = fc.oneof(
        fc.string({ unit: 'binary', maxLength: 200 }).map((x) => Buffer.from(x)),
        fc.uint8Array({ maxLength: 300 }).map((x) => Buffer.from(x)),
        fc
          .constantFrom(
            '{',
            '{"a":',
            '[1,2',
            '{"a":1}}',
            '\u0000',
            'nul',
            '{"__proto__":{"x":1}}',
            '{"a":1,"a":2}',
            '1e999999',
            '"\\ud800"',
            '--x\r\n\r\n--x--',
          )
          .map((x) => Buffer.from(x)),
        fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
      );
      await fc.assert(
        fc.asyncProperty(contentType, body, fc.boolean(), async (type, payload, bearer) => {
          const auth: Record<string, string> = bearer
            ? { authorization: `Bearer ${s.a.token}` }
            : { 'x-api-token': s.a.token };
          auth['cookie'] = session;
          const res = await inject(`${routeKey(route)} ${type} ${payload.toString('latin1').slice(0, 200)}`, {
            method: route.method as 'POST',
            url,
            headers: { 'content-type': type, ...auth },
            payload,
          });
          assertSane(
            `${routeKey(route)} ${type} ${JSON.stringify(payload.toString('latin1').slice(0, 200))}`,
            res,
            routeKey(route),
          );
        }),
        params,
      );
    },
  );

  it.each(getRoutes.map((route) => [routeKey(route), route] as const))(
    '%s: random query strings get 2xx or a 4xx envelope',
    async (_name, route) => {
      const query = fc.dictionary(
        fc.constantFrom('repo', 'repoHost', 'page', 'x', 'repo[]', '__proto__', 'constructor'),
        fc.oneof(hostileString, fc.constantFrom('acme/web', 'github.com', '%', '%zz', '%00')),
        { maxKeys: 3 },
      );
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const search = Object.entries(q)
            .map(([k, v]) => `${uriEscape(k)}=${v.startsWith('%') ? v : uriEscape(v)}`)
            .join('&');
          const url = `${route.url.replace(/:(\w+)/g, 'x')}?${search}`;
          const res = await inject(`GET ${url}`, {
            method: 'GET',
            url,
            headers: { 'x-api-token': s.a.token, cookie: session },
          });
          assertSane(`GET ${url}`, res, routeKey(route));
        }),
        { ...params, numRuns: Math.min(RUNS, 20) },
      );
    },
  );

  it('POST /v1/test-results/upload: random meta and files get 2xx or a 4xx envelope', async () => {
    const meta = fc.oneof(
      fc.record({
        repo: fc.oneof(fc.constant(s.a.repo), fc.jsonValue({ maxDepth: 1 })),
        org_url_slug: fc.oneof(fc.constant(s.a.slug), hostileString),
        branch: fc.oneof(fc.constant('main'), hostileString),
        commit_sha: fc.oneof(fc.constant('f00d'), hostileString),
        pr_number: fc.oneof(hostileNumber, fc.constant(undefined)),
        upload_key: fc.oneof(hostileString, fc.constant(undefined)),
      }),
      fc.jsonValue({ maxDepth: 2 }),
      hostileString,
    );
    const file = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.constantFrom(
        '<testsuite><testcase name="t"/></testsuite>',
        '<testsuite><testcase name="\u0000"/></testsuite>',
        '<testsuite name="&#0;"><testcase name="&#xD800;"/></testsuite>',
        '<testsuite><testcase name="a" time="-1e999"/></testsuite>',
        '<testsuites><testsuite><testcase name="x"><failure message="m">&amp;&lt;</failure></testcase>',
      ),
    );
    await fc.assert(
      fc.asyncProperty(meta, fc.array(file, { maxLength: 3 }), async (m, files) => {
        const res = await upload(
          'upload',
          m,
          files.map((content, i) => ({ name: `f${i}.xml`, content })),
        );
        assertSane(
          `POST /v1/test-results/upload meta=${JSON.stringify(m)?.slice(0, 200)} files=${JSON.stringify(files).slice(0, 300)}`,
          res,
        );
      }),
      params,
    );
  });

  it('list endpoints: forged, truncated and foreign page tokens get 400, never 5xx', async () => {
    const lists = jsonOperations.filter((op) => op.body?.properties?.['page_query'] !== undefined);
    expect(lists.length).toBeGreaterThan(2);
    const baseBody = (op: Operation): Record<string, unknown> => {
      const body: Record<string, unknown> = { page_query: { page_size: 1 } };
      const props = op.body?.properties ?? {};
      if ('repo' in props) body['repo'] = s.a.repo;
      if ('org_url_slug' in props) body['org_url_slug'] = s.a.slug;
      if ('status' in props) body['status'] = 'FLAKY';
      if ('start_time' in props) {
        body['start_time'] = new Date(s.a.at - 3_600_000).toISOString();
        body['end_time'] = new Date(s.a.at + 3_600_000).toISOString();
      }
      return body;
    };
    // A real token of one list, to tamper with and to use on the others.
    const repos = await json(
      lists.find((op) => op.url === '/v1/repositories/list') ?? lists[0]!,
      JSON.stringify({ page_query: { page_size: 1 } }),
    );
    expect(repos.statusCode).toBe(200);
    await s.t.post('/v1/repositories/create', { repo: { ...s.a.repo, name: 'second' } }, s.a.token);
    const real = (await s.t.post('/v1/repositories/list', { page_query: { page_size: 1 } }, s.a.token)).json()
      .page.next_page_token as string;
    expect(real).not.toBe('');
    const token = fc.oneof(
      fc.constant(real),
      fc.string({ maxLength: 200 }),
      fc.base64String({ maxLength: 200 }),
      fc.nat({ max: real.length - 1 }).map((n) => real.slice(0, n)),
      fc
        .tuple(fc.nat({ max: real.length - 1 }), fc.constantFrom('A', '_', '-', '.', '='))
        .map(([n, c]) => real.slice(0, n) + c + real.slice(n + 1)),
      fc
        .jsonValue()
        .map((v) => `${Buffer.from(JSON.stringify(v) ?? '').toString('base64url')}.${real.split('.').pop()}`),
      fc.constantFrom('.', '..', 'a.b.c', `${'A'.repeat(4096)}`, '\u0000'),
    );
    for (const op of lists) {
      await fc.assert(
        fc.asyncProperty(token, async (page_token) => {
          const body = baseBody(op);
          body['page_query'] = { page_size: 1, page_token };
          const res = await json(op, JSON.stringify(body));
          assertSane(`${routeKey(op)} page_token=${JSON.stringify(page_token).slice(0, 200)}`, res);
          if (res.statusCode >= 400 && res.statusCode !== 400)
            throw new Error(`${routeKey(op)} answered a bad page token with ${res.statusCode}: ${res.body}`);
        }),
        { ...params, numRuns: Math.min(RUNS, 25) },
      );
    }
  });

  it('dashboard: random paths under an organization, signed in, get a page, a redirect or a 4xx', async () => {
    const segment = fc.oneof(
      fc.constantFrom(
        'repos',
        'tests',
        'queues',
        'runs',
        'prs',
        'pulls',
        'github.com',
        'acme',
        'web',
        'main',
        '1',
        s.a.flakyTestId,
        s.a.runId,
      ),
      // Only well-formed escapes here: malformed ones have a test of their own below.
      fc.constantFrom('%25', '%2F', '%00', '%C3%A9', '..', '.', '%2e%2e', 'x%20y', '0', '99999999999', '-1'),
      hostileString.map((x) => uriEscape(x).slice(0, 300)),
    );
    const query = fc.constantFrom(
      '',
      '?show=quarantined',
      '?page=-1',
      '?page=1e99',
      '?sort=%00',
      '?q=%ff',
      '?show[]=x&show=y',
      `?q=${'x'.repeat(3000)}`,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 0, maxLength: 8 }), query, async (segments, q) => {
        const url = `/${s.a.slug}/repos/${segments.filter((x) => x !== '').join('/')}${q}`;
        const res = await inject(`GET ${url}`, { method: 'GET', url, headers: { cookie: session } });
        assertSane(`GET ${url}`, res, 'GET /:org/repos/*');
      }),
      params,
    );
  });

  it('dashboard: test actions with random form fields get a redirect or a 4xx', async () => {
    const field = fc.oneof(
      hostileString,
      fc.constantFrom('AUTO', 'ALWAYS_QUARANTINE', 'NEVER_QUARANTINE', 'true', 'false'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('quarantine', 'flag'),
        fc.constantFrom(
          s.a.flakyTestId,
          s.a.pinnedTestId,
          '00000000-0000-0000-0000-000000000000',
          'not-a-uuid',
        ),
        fc.dictionary(fc.constantFrom('setting', 'flagged', 'reason', 'extra', '_csrf'), field, {
          maxKeys: 4,
        }),
        fc.boolean(),
        async (action, testId, form, withCsrf) => {
          const url = `${paths.test(s.a.slug, s.a.repo, testId)}/${action}`;
          const res = await inject(`POST ${url}`, {
            method: 'POST',
            url,
            headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded' },
            payload: new URLSearchParams(withCsrf ? { ...form, _csrf: csrf } : form).toString(),
          });
          assertSane(`POST ${url} ${JSON.stringify(form).slice(0, 300)}`, res, 'POST /:org/repos/*');
        },
      ),
      params,
    );
  });

  it('every JSON endpoint: a NUL character in any string gets a 4xx, on both engines', async () => {
    // PostgreSQL refuses NUL in text (SQLite stores it): unless the edge refuses it, it is a 500 there.
    const failures: string[] = [];
    for (const op of jsonOperations) {
      const base = baseBody(op.body!, hints(s));
      for (const path of leafPaths(base).filter((p) => typeof getPath(base, p) === 'string')) {
        const body = setPath(base, path, `${String(getPath(base, path))}\u0000x`);
        const res = await json(op, JSON.stringify(body));
        try {
          assertSane(`${routeKey(op)} ${JSON.stringify(body).slice(0, 300)}`, res, routeKey(op));
        } catch {
          failures.push(`${routeKey(op)} $.${path.join('.')}: ${res.statusCode}`);
        }
      }
    }
    // The multipart upload's meta part (validated by its own schema, not in the OpenAPI body).
    const meta = {
      repo: s.a.repo,
      org_url_slug: s.a.slug,
      branch: 'main',
      commit_sha: 'abc',
      job_name: 'j',
      variant: 'v',
      pr_title: 't',
      upload_key: 'k',
    };
    for (const field of ['branch', 'commit_sha', 'job_name', 'variant', 'pr_title', 'upload_key'] as const) {
      const res = await upload(`upload ${field}`, { ...meta, [field]: `${meta[field]}\u0000x` }, ONE_TEST);
      if (res.statusCode >= 500)
        failures.push(`POST /v1/test-results/upload meta.${field}: ${res.statusCode}`);
    }
    expect(failures).toEqual([]);
  });

  it('every JSON endpoint: integers up to the documented maximum get 2xx or 4xx, on both engines', async () => {
    // The schemas allow PR numbers up to 4294967295; a PostgreSQL integer column holds 2147483647.
    const failures: string[] = [];
    for (const op of jsonOperations) {
      const base = baseBody(op.body!, hints(s));
      for (const path of leafPaths(base).filter((p) => typeof getPath(base, p) === 'number')) {
        for (const value of [2_147_483_648, 4_294_967_295]) {
          const body = setPath(base, path, value);
          const res = await json(op, JSON.stringify(body));
          try {
            assertSane(`${routeKey(op)} ${JSON.stringify(body).slice(0, 300)}`, res, routeKey(op));
          } catch {
            failures.push(`${routeKey(op)} $.${path.join('.')}=${value}: ${res.statusCode}`);
          }
        }
      }
    }
    // The multipart upload's meta part: pr_number and run_attempt allow up to 4294967295 too.
    for (const field of ['pr_number', 'run_attempt'] as const) {
      for (const value of [2_147_483_648, 4_294_967_295]) {
        const meta = {
          repo: s.a.repo,
          org_url_slug: s.a.slug,
          branch: 'main',
          commit_sha: `big${value}`,
          [field]: value,
        };
        const res = await upload(`upload ${field}`, meta, ONE_TEST);
        if (res.statusCode >= 500)
          failures.push(`POST /v1/test-results/upload meta.${field}=${value}: ${res.statusCode}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('a malformed percent-escape in a path gets a 400 with the request id (and the envelope on /v1)', async () => {
    const api = await inject('bad url', {
      method: 'PUT',
      url: '/v1/metrics/bundle-uploads/%E0%A4%A',
      payload: 'x',
    });
    expect(api.statusCode).toBe(400);
    expect(api.json()).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
    expect(api.headers['x-request-id']).toEqual(expect.any(String));
    const page = await inject('bad url', {
      method: 'GET',
      url: `/${s.a.slug}/repos/%ff`,
      headers: { cookie: session },
    });
    expect(page.statusCode).toBe(400);
    expect(page.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('repository references that are no safe git path get 4xx on the git-forge routes, not 500', async () => {
    // Allowed by the RepoRef schema (owner: no whitespace; name: no slash or whitespace), refused by
    // the git forge's path rules (forge/git/repos.ts repoPath).
    const refs = [
      { host: 'github.com', owner: '..', name: 'x' },
      { host: 'github.com', owner: 'acme', name: '.hidden' },
      { host: 'github.com', owner: 'acme', name: 'x'.repeat(101) },
      { host: 'github.com', owner: 'a//b', name: 'x' },
    ];
    const failures: string[] = [];
    for (const repo of refs) {
      for (const [url, extra] of [
        ['/v1/git/createRepository', {}],
        ['/v1/createQueue', { targetBranch: 'main' }],
      ] as const) {
        const res = await s.t.post(url, { repo, ...extra }, s.a.token);
        if (res.statusCode >= 500) failures.push(`${url} ${JSON.stringify(repo)} → ${res.statusCode}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('raw HTTP on a listening socket', () => {
  const s = useTestApp();
  let port: number;

  beforeAll(async () => {
    await s.app.listen({ host: '127.0.0.1', port: 0 });
    port = (s.app.server.address() as AddressInfo).port;
  });

  function request(headers: Record<string, string>, body = '{}'): Promise<{ status: number; body: string }> {
    return withTimeout(
      'raw request',
      new Promise((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port, method: 'POST', path: '/v1/repositories/list', headers, agent: false },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => {
              text += c.toString();
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    );
  }

  it('refuses huge headers with 431 and keeps serving', async () => {
    const huge = await request({
      'content-type': 'application/json',
      'x-api-token': s.orgToken,
      'x-junk': 'x'.repeat(100_000),
    });
    expect(huge.status).toBe(431);
    const many: Record<string, string> = { 'content-type': 'application/json', 'x-api-token': s.orgToken };
    for (let i = 0; i < 2000; i++) many[`x-h-${i}`] = 'yyyyyyyy';
    expect((await request(many)).status).toBe(431);
    const ok = await request(
      { 'content-type': 'application/json', 'x-api-token': s.orgToken },
      '{"page_query":{"page_size":1}}',
    );
    expect(ok.status).toBe(200);
  });

  it('answers a token in a huge or odd header with 401, not 5xx', async () => {
    for (const value of ['x'.repeat(8000), 'ml_\u00e9', 'Bearer', ' ']) {
      const res = await request({ 'content-type': 'application/json', 'x-api-token': value });
      expect(res.status, value.slice(0, 20)).toBe(401);
    }
    const res = await request({
      'content-type': 'application/json',
      authorization: `Bearer ${'y'.repeat(8000)}`,
    });
    expect(res.status).toBe(401);
  });
});

describe('GitHub webhook deliveries on a server with GitHub configured', () => {
  const SECRET = 'fuzz-webhook-secret';
  // Repositories on 127.0.0.1 would go to "GitHub" at a closed loopback port; none are used here.
  const t = useTestApp({
    env: {
      MAINLINE_GITHUB_TOKEN: 'ghp_fuzz',
      MAINLINE_GITHUB_WEBHOOK_SECRET: SECRET,
      MAINLINE_GITHUB_API_URL: 'http://127.0.0.1:9/api/v3',
    },
  });

  it('POST /webhooks/github: a signed delivery whose JSON is not an object gets 400 INVALID_JSON, not a 500', async () => {
    for (const body of ['null', '[]', '1', '"push"']) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/webhooks/github',
        headers: {
          'content-type': 'application/json',
          'x-github-delivery': `not-an-object-${body}`,
          'x-github-event': 'push',
          'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
        },
        payload: body,
      });
      expect(res.statusCode, `${body}: ${res.body}`).toBe(400);
      expect(res.json().error.code).toBe('INVALID_JSON');
    }
  });

  it('POST /webhooks/github: random deliveries, signed or not, get 202 or a 4xx envelope', async () => {
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
      fc.uint8Array({ maxLength: 300 }).map((x) => Buffer.from(x)),
      fc
        .constantFrom('', '{', '{"action":"\\u0000"}', '{"action":1e999}', '{"__proto__":{"x":1}}')
        .map((x) => Buffer.from(x)),
    );
    const header = fc.oneof(
      fc.constant(undefined),
      fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/),
      fc.constantFrom(
        '',
        'x'.repeat(5000),
        'push',
        'issue_comment',
        'pull_request',
        'check_run',
        'status',
        'ping',
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        body,
        header,
        header,
        fc.constantFrom('valid', 'none', 'wrong', 'odd'),
        async (payload, id, event, sig) => {
          const sign = (secret: string) =>
            `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;
          const signature =
            sig === 'valid'
              ? sign(SECRET)
              : sig === 'wrong'
                ? sign('not-the-secret')
                : sig === 'odd'
                  ? 'sha256=zz'
                  : undefined;
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (id !== undefined) headers['x-github-delivery'] = id;
          if (event !== undefined) headers['x-github-event'] = event;
          if (signature !== undefined) headers['x-hub-signature-256'] = signature;
          const res = await withTimeout(
            'webhook',
            t.app.inject({
              method: 'POST',
              url: '/webhooks/github',
              headers,
              payload,
            }) as unknown as Promise<LightMyRequestResponse>,
          );
          assertSane(
            `POST /webhooks/github ${sig} ${JSON.stringify(headers).slice(0, 200)} ${payload.toString('latin1').slice(0, 200)}`,
            res,
          );
        },
      ),
      params,
    );
  });
});
