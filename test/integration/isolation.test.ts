import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../src/web/paths.ts';
import { REPO } from '../support/app.ts';
import { GitScenario } from '../support/git-scenario.ts';
import { storedQueueState } from '../support/queue-rows.ts';
import { queueId } from '../support/reads.ts';
import { listRoutes, openApiOperations, routeKey } from '../support/routes.ts';
import { seedTenants, snapshotTenant, type Tenants, tenantBundle } from '../support/seed.ts';
import { junitXml, multipart } from '../support/upload.ts';

/**
 * Tenant isolation, checked route by route. Organization A owns everything a tenant can own
 * (test-results uploads with a FLAKY and a quarantined test, a ticket, settings, a merge queue with a
 * PR under test and a CI status, an outgoing webhook, a bundle upload); organization B has a token.
 * For every route the application serves, CASES says how B names A's things, and what B must get:
 * a 404, or (`own`) an answer about B's own data. After every request, nothing of A may have changed
 * (database rows and A's bare git repository), and no response may carry anything of A's that B did
 * not send itself.
 *
 * The route list is read from Fastify (listRoutes), so a route added to the app without a case here,
 * or an exemption with its reason, fails `every route has a case`.
 */

interface Req {
  readonly method: string;
  readonly url: string;
  readonly body?: unknown;
  readonly payload?: Buffer;
  /** A form post (application/x-www-form-urlencoded), as the dashboard's forms send. */
  readonly form?: Record<string, string>;
  readonly headers?: Record<string, string>;
}

/** A status, or `own`: any 2xx (an answer about B's own data). */
type Expectation = number | 'own';

interface Probe {
  readonly what: string;
  /**
   * `foreign`: B has nothing yet and names A's repository, tests, queue, PRs, webhook.
   * `same-ref`: B has made its own repository with A's exact reference (host/owner/name) and its own
   * queue on `main`, so lookups by name succeed and only ids and ownership keep A's data apart.
   */
  readonly phase: 'foreign' | 'same-ref';
  readonly expect: Expectation;
  /** May make setup requests of its own (as B); answers the request under test. */
  readonly request: (s: Tenants) => Req | Promise<Req>;
  /** Further checks of the answer. */
  readonly check?: (res: LightMyRequestResponse, s: Tenants) => void;
  /**
   * B stores A's test names as its own (an upload): from then on B's own answers may hold them, so
   * these run after the other probes of their phase.
   */
  readonly storesANames?: true;
}

interface Case {
  /**
   * How B authenticates: `token` (the /v1 API-token hook; x-api-token and Bearer alternate),
   * `session` (the dashboard's sign-in cookie, and its CSRF token in forms), `signed-url` (the URL
   * itself is the credential), `public` (nothing: the sign-in form).
   */
  readonly auth: 'token' | 'session' | 'signed-url' | 'public';
  readonly probes: readonly Probe[];
}

const post = (url: string, body: unknown): Req => ({ method: 'POST', url, body });
const get = (url: string): Req => ({ method: 'GET', url });
const postForm = (url: string, form: Record<string, string>): Req => ({ method: 'POST', url, form });

/** A's webhook named by id to a route that takes one, alone and with A's org: 404 either way. */
const foreignWebhookProbes = (url: string): Probe[] => [
  { what: 'A’s webhook', phase: 'foreign', expect: 404, request: (s) => post(url, { id: s.a.webhookId }) },
  {
    what: 'A’s webhook in A’s org',
    phase: 'foreign',
    expect: 404,
    request: (s) => post(url, { id: s.a.webhookId, org_url_slug: s.a.slug }),
  },
];
const scope = (s: Tenants) => ({ repo: s.a.repo, org_url_slug: s.b.slug });
const aScope = (s: Tenants) => ({ repo: s.a.repo, org_url_slug: s.a.slug });
const queueRef = (s: Tenants) => ({ repo: s.a.repo, targetBranch: s.a.targetBranch });
const window = (s: Tenants) => ({
  start_time: new Date(s.a.at - 3_600_000).toISOString(),
  end_time: new Date(s.a.at + 3_600_000).toISOString(),
});
const page = { page_query: { page_size: 100 } };

/** The same request with B's org slug, then with A's: both must miss. */
function bothSlugs(what: string, url: string, body: (s: Tenants) => object): Probe[] {
  return [
    {
      what: `${what}, B's slug`,
      phase: 'foreign',
      expect: 404,
      request: (s) => post(url, { ...scope(s), ...body(s) }),
    },
    {
      what: `${what}, A's slug`,
      phase: 'foreign',
      expect: 404,
      request: (s) => post(url, { ...aScope(s), ...body(s) }),
    },
  ];
}

/** Test-scoped flaky-tests routes: every one of A's test ids, before and after B has the same repository. */
function testScoped(url: string, extra: object): Probe[] {
  return [
    ...bothSlugs('A’s flaky test', url, (s) => ({ test_id: s.a.flakyTestId, ...extra })),
    {
      what: 'A’s test ids in B’s same-named repository',
      phase: 'same-ref',
      expect: 404,
      request: (s) => post(url, { ...scope(s), test_id: s.a.pinnedTestId, ...extra }),
    },
    {
      what: 'A’s failing test in B’s same-named repository',
      phase: 'same-ref',
      expect: 404,
      request: (s) => post(url, { ...scope(s), test_id: s.a.failingTestId, ...extra }),
    },
  ];
}

/** A queue route with A's repository and branch (and PR): 404 before B has a queue, 404 for A's PR after. */
function queueScoped(url: string, extra: (s: Tenants) => object, sameRef: Expectation = 404): Probe[] {
  return [
    {
      what: 'A’s queue',
      phase: 'foreign',
      expect: 404,
      request: (s) => post(url, { ...queueRef(s), ...extra(s) }),
    },
    {
      what: sameRef === 'own' ? 'B’s own same-named queue' : 'A’s PR or run through B’s same-named queue',
      phase: 'same-ref',
      expect: sameRef,
      request: (s) => post(url, { ...queueRef(s), ...extra(s) }),
    },
  ];
}

const emptyList =
  (field: string) =>
  (res: LightMyRequestResponse): void => {
    expect(res.json()[field], `${field} of B's answer`).toEqual([]);
  };

/** A queue's listing: A's queue a 404; B's own same-named queue answers with `field` empty. */
const queueListing = (url: string, field: string): Probe[] =>
  queueScoped(url, () => ({}), 'own').map((p) =>
    p.phase === 'same-ref' ? { ...p, check: emptyList(field) } : p,
  );

function uploadRequest(meta: object, files: { name: string; content: string }[]): Req {
  const body = multipart(meta, files);
  return {
    method: 'POST',
    url: '/v1/test-results/upload',
    payload: body.payload,
    headers: { 'content-type': body.contentType },
  };
}

/** A's dashboard pages, by what they show; `org` is the organization segment of the path. */
const aPages: readonly [string, (s: Tenants, org: string) => string][] = [
  ['repository', (s, org) => paths.repo(org, s.a.repo)],
  ['flaky test', (s, org) => paths.test(org, s.a.repo, s.a.flakyTestId)],
  ['quarantined test', (s, org) => paths.test(org, s.a.repo, s.a.pinnedTestId)],
  ['queue', (s, org) => paths.queue(org, s.a.repo, s.a.targetBranch)],
  ['test run', (s, org) => paths.run(org, s.a.repo, s.a.targetBranch, s.a.runId)],
  ['queued PR', (s, org) => paths.pr(org, s.a.repo, s.a.targetBranch, s.a.prNumber)],
  ['pull request', (s, org) => paths.pull(org, s.a.repo, s.a.prNumber)],
];

/** The link trunk-analytics-cli prints for A's test (url_for_test_case), under organization `org`. */
const cliTestLink = (s: Tenants, org: string) =>
  `/${org}/flaky-tests/test/${s.a.flakyTestId}?repo=${encodeURIComponent(`${s.a.repo.owner}/${s.a.repo.name}`)}`;

const CASES: Record<string, Case> = {
  'POST /v1/repositories/create': {
    auth: 'token',
    probes: [
      {
        what: 'in A’s org',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/repositories/create', aScope(s)),
      },
      {
        what: 'a repository of B’s own, named like A’s',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/repositories/create', { repo: { ...s.a.repo, name: 'web-2' } }),
      },
    ],
  },
  'POST /v1/repositories/get': {
    auth: 'token',
    probes: [
      ...bothSlugs('A’s repository', '/v1/repositories/get', () => ({})),
      {
        what: 'B’s same-named repository',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/repositories/get', { repo: s.a.repo }),
      },
    ],
  },
  'POST /v1/repositories/list': {
    auth: 'token',
    probes: [
      {
        what: 'B’s list',
        phase: 'foreign',
        expect: 'own',
        request: () => post('/v1/repositories/list', page),
        check: (res) => expect(res.json().page.total_rows).toBe(0),
      },
      {
        what: 'A’s list',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/repositories/list', { ...page, org_url_slug: s.a.slug }),
      },
    ],
  },
  'POST /v1/test-results/upload': {
    auth: 'token',
    probes: [
      {
        what: 'results for A’s org',
        phase: 'foreign',
        expect: 404,
        request: (s) =>
          uploadRequest({ repo: s.a.repo, org_url_slug: s.a.slug, branch: 'main', commit_sha: 'b0b' }, [
            { name: 'b.xml', content: junitXml([{ name: s.a.testNames[0]!, fail: 'B was here' }]) },
          ]),
      },
      {
        what: 'results for A’s test names into B’s same-named repository',
        phase: 'same-ref',
        expect: 'own',
        storesANames: true,
        request: (s) =>
          uploadRequest({ repo: s.a.repo, org_url_slug: s.b.slug, branch: 'main', commit_sha: 'b0b' }, [
            { name: 'b.xml', content: junitXml(s.a.testNames.map((name) => ({ name, fail: 'B was here' }))) },
          ]),
        check: (res, s) => {
          const ids = (res.json().failed_tests as { test_case_id: string }[]).map((x) => x.test_case_id);
          expect(ids).toHaveLength(3);
          for (const id of [s.a.flakyTestId, s.a.pinnedTestId, s.a.failingTestId])
            expect(ids).not.toContain(id);
        },
      },
    ],
  },
  'POST /v1/flaky-tests/list-unhealthy-tests': {
    auth: 'token',
    probes: [
      ...bothSlugs('A’s FLAKY tests', '/v1/flaky-tests/list-unhealthy-tests', () => ({
        ...page,
        status: 'FLAKY',
      })),
      {
        what: 'FLAKY tests of B’s same-named repository',
        phase: 'same-ref',
        expect: 'own',
        request: (s) =>
          post('/v1/flaky-tests/list-unhealthy-tests', { ...scope(s), ...page, status: 'FLAKY' }),
        check: emptyList('tests'),
      },
    ],
  },
  'POST /v1/flaky-tests/list-quarantined-tests': {
    auth: 'token',
    probes: [
      ...bothSlugs('A’s quarantined tests', '/v1/flaky-tests/list-quarantined-tests', () => page),
      {
        what: 'quarantined tests of B’s same-named repository',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/flaky-tests/list-quarantined-tests', { ...scope(s), ...page }),
        check: emptyList('quarantined_tests'),
      },
    ],
  },
  'POST /v1/flaky-tests/list-failing-tests': {
    auth: 'token',
    probes: [
      ...bothSlugs('A’s failing tests', '/v1/flaky-tests/list-failing-tests', (s) => ({
        ...page,
        ...window(s),
      })),
      {
        what: 'failing tests of B’s same-named repository',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/flaky-tests/list-failing-tests', { ...scope(s), ...page, ...window(s) }),
      },
    ],
  },
  'POST /v1/flaky-tests/get-test-details': {
    auth: 'token',
    probes: testScoped('/v1/flaky-tests/get-test-details', {}),
  },
  'POST /v1/flaky-tests/link-ticket-to-test-case': {
    auth: 'token',
    probes: [
      {
        what: 'A’s test',
        phase: 'foreign',
        expect: 404,
        request: (s) =>
          post('/v1/flaky-tests/link-ticket-to-test-case', {
            repo: s.a.repo,
            test_case_id: s.a.flakyTestId,
            external_ticket_id: 'B-1',
          }),
      },
      {
        what: 'A’s test through B’s same-named repository',
        phase: 'same-ref',
        expect: 404,
        request: (s) =>
          post('/v1/flaky-tests/link-ticket-to-test-case', {
            repo: s.a.repo,
            test_case_id: s.a.pinnedTestId,
            external_ticket_id: 'B-1',
          }),
      },
    ],
  },
  'POST /v1/flaky-tests/get-repository-settings': {
    auth: 'token',
    probes: [
      ...bothSlugs('A’s settings', '/v1/flaky-tests/get-repository-settings', () => ({})),
      {
        what: 'B’s same-named repository’s settings',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/flaky-tests/get-repository-settings', scope(s)),
        check: (res) => expect(res.json().settings.ticket_url_template).toBeNull(),
      },
    ],
  },
  'POST /v1/flaky-tests/update-repository-settings': {
    auth: 'token',
    probes: [
      ...bothSlugs('A’s settings', '/v1/flaky-tests/update-repository-settings', () => ({
        settings: { quarantining_enabled: false, ticket_url_template: null },
      })),
      {
        what: 'B’s same-named repository’s settings',
        phase: 'same-ref',
        expect: 'own',
        request: (s) =>
          post('/v1/flaky-tests/update-repository-settings', {
            ...scope(s),
            settings: {
              quarantining_enabled: false,
              auto_quarantine_flaky: false,
              ticket_url_template: null,
            },
          }),
      },
    ],
  },
  'POST /v1/flaky-tests/set-quarantine-override': {
    auth: 'token',
    probes: testScoped('/v1/flaky-tests/set-quarantine-override', { setting: 'NEVER_QUARANTINE' }),
  },
  'POST /v1/flaky-tests/flag-test': {
    auth: 'token',
    probes: testScoped('/v1/flaky-tests/flag-test', { flagged: true, reason: 'B' }),
  },
  'POST /v1/flaky-tests/get-test-history': {
    auth: 'token',
    probes: testScoped('/v1/flaky-tests/get-test-history', {}),
  },
  'POST /v1/metrics/createBundleUpload': {
    auth: 'token',
    probes: [
      {
        what: 'an upload URL for A’s org',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/metrics/createBundleUpload', { repo: s.a.repo, orgUrlSlug: s.a.slug }),
      },
      {
        what: 'an upload URL for B’s same-named repository',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/metrics/createBundleUpload', { repo: s.a.repo, orgUrlSlug: s.b.slug }),
      },
    ],
  },
  'PUT /v1/metrics/bundle-uploads/:id': {
    auth: 'signed-url',
    probes: [
      {
        what: 'A’s bundle id under B’s signature',
        phase: 'same-ref',
        expect: 403,
        request: async (s) => {
          const url = new URL((await bCreateBundle(s)).url);
          url.pathname = `/v1/metrics/bundle-uploads/${s.a.bundleId}`;
          return { method: 'PUT', url: url.pathname + url.search, payload: Buffer.from('not read') };
        },
      },
      {
        what: 'B’s bundle whose meta.json names A’s org and repository',
        phase: 'same-ref',
        expect: 'own',
        storesANames: true,
        request: async (s) => {
          const { url } = await bCreateBundle(s);
          const bundle = await tenantBundle(
            s.a.repo,
            [junitXml(s.a.testNames.map((name) => ({ name, fail: 'B' })))],
            {
              org: s.a.slug,
            },
          );
          const u = new URL(url);
          return { method: 'PUT', url: u.pathname + u.search, payload: Buffer.from(bundle) };
        },
      },
    ],
  },
  'POST /v1/metrics/getQuarantineConfig': {
    auth: 'token',
    probes: [
      {
        what: 'A’s org',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/metrics/getQuarantineConfig', { repo: s.a.repo, orgUrlSlug: s.a.slug }),
      },
      ...(['foreign', 'same-ref'] as const).map(
        (phase): Probe => ({
          what: 'A’s quarantined tests by name',
          phase,
          expect: 'own',
          request: (s) =>
            post('/v1/metrics/getQuarantineConfig', {
              repo: s.a.repo,
              orgUrlSlug: s.b.slug,
              testIdentifiers: s.a.testNames.map((name) => ({
                name,
                className: 'pkg.Class',
                parentName: 'suite',
              })),
            }),
          check: emptyList('testIds'),
        }),
      ),
    ],
  },
  'POST /v1/createQueue': {
    auth: 'token',
    probes: [
      {
        what: 'a queue of B’s own on another branch of the same-named repository',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/createQueue', { repo: s.a.repo, targetBranch: 'release' }),
      },
    ],
  },
  'POST /v1/getQueue': {
    auth: 'token',
    probes: queueListing('/v1/getQueue', 'enqueuedPullRequests'),
  },
  'POST /v1/updateQueue': {
    auth: 'token',
    probes: queueScoped(
      '/v1/updateQueue',
      () => ({ state: 'paused', concurrency: 7, requiredStatuses: ['b'] }),
      'own',
    ),
  },
  'POST /v1/deleteQueue': {
    auth: 'token',
    probes: [
      {
        what: 'A’s queue',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/deleteQueue', queueRef(s)),
      },
      {
        what: 'B’s own queue on a branch A also queues',
        phase: 'same-ref',
        expect: 'own',
        request: async (s) => {
          const created = await asB(s, post('/v1/createQueue', { repo: s.a.repo, targetBranch: 'doomed' }));
          expect(created.statusCode, created.body).toBe(200);
          return post('/v1/deleteQueue', { repo: s.a.repo, targetBranch: 'doomed' });
        },
      },
    ],
  },
  'POST /v1/submitPullRequest': {
    auth: 'token',
    probes: [
      ...queueScoped('/v1/submitPullRequest', (s) => ({ pr: { number: s.a.prNumber } })),
      ...queueScoped('/v1/submitPullRequest', (s) => ({ pr: { number: s.a.idlePrNumber } })),
    ],
  },
  'POST /v1/cancelPullRequest': {
    auth: 'token',
    probes: queueScoped('/v1/cancelPullRequest', (s) => ({ pr: { number: s.a.prNumber } })),
  },
  'POST /v1/restartTestsOnPullRequest': {
    auth: 'token',
    probes: queueScoped('/v1/restartTestsOnPullRequest', (s) => ({ pr: { number: s.a.prNumber } })),
  },
  'POST /v1/getSubmittedPullRequest': {
    auth: 'token',
    probes: queueScoped('/v1/getSubmittedPullRequest', (s) => ({ pr: { number: s.a.prNumber } })),
  },
  'POST /v1/setImpactedTargets': {
    auth: 'token',
    probes: queueScoped(
      '/v1/setImpactedTargets',
      (s) => ({ pr: { number: s.a.prNumber, sha: s.a.prHeadSha }, impactedTargets: ['//b:everything'] }),
      'own',
    ),
  },
  'POST /v1/listPullRequests': {
    auth: 'token',
    probes: queueListing('/v1/listPullRequests', 'pullRequests'),
  },
  'POST /v1/getMergeQueueTestingDetails': {
    auth: 'token',
    probes: queueScoped('/v1/getMergeQueueTestingDetails', (s) => ({ testRunId: s.a.runId })),
  },
  'GET /v1/getMergeQueueMetrics': {
    auth: 'token',
    probes: (['foreign', 'same-ref'] as const).flatMap((phase): Probe[] => [
      {
        what: 'B’s queue metrics',
        phase,
        expect: 'own',
        request: () => ({ method: 'GET', url: '/v1/getMergeQueueMetrics' }),
        check: (res) => expect(res.body).not.toMatch(/mq_test_runs_in_progress\{[^}]*\} [1-9]/),
      },
      {
        what: 'B’s queue metrics narrowed to A’s repository',
        phase,
        expect: 'own',
        request: () => ({ method: 'GET', url: '/v1/getMergeQueueMetrics?repo=acme/web&repoHost=github.com' }),
        check: (res) => expect(res.body).not.toMatch(/mq_test_runs_in_progress\{[^}]*\} [1-9]/),
      },
    ]),
  },
  'POST /v1/git/createRepository': {
    auth: 'token',
    probes: [
      {
        what: 'the bare repository of B’s same-named repository is B’s own, not A’s',
        phase: 'same-ref',
        expect: 'own',
        request: (s) => post('/v1/git/createRepository', { repo: s.a.repo }),
        check: (res, s) => expect(res.json().path).not.toBe(s.a.gitPath),
      },
    ],
  },
  'POST /v1/git/registerPullRequest': {
    auth: 'token',
    probes: [
      {
        what: 'a PR in A’s repository',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/git/registerPullRequest', registerBody(s, 9, 'feature-2')),
      },
      {
        what: 'a PR of B’s whose head is A’s branch (B’s repository has no such branch)',
        phase: 'same-ref',
        expect: 400,
        request: (s) => post('/v1/git/registerPullRequest', registerBody(s, 9, 'feature-2')),
      },
    ],
  },
  'POST /v1/git/closePullRequest': {
    auth: 'token',
    probes: [
      {
        what: 'A’s PR',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/git/closePullRequest', { repo: s.a.repo, number: 1 }),
      },
      {
        what: 'A’s PR number in B’s repository',
        phase: 'same-ref',
        expect: 404,
        request: (s) => post('/v1/git/closePullRequest', { repo: s.a.repo, number: 1 }),
      },
    ],
  },
  'POST /v1/git/reportStatus': {
    auth: 'token',
    probes: (['foreign', 'same-ref'] as const).map(
      (phase): Probe => ({
        what: 'a failure at A’s test-branch commit',
        phase,
        expect: phase === 'foreign' ? 404 : 'own',
        request: (s) =>
          post('/v1/git/reportStatus', {
            repo: s.a.repo,
            sha: s.a.testBranchSha,
            context: 'ci',
            state: 'failure',
          }),
      }),
    ),
  },
  'POST /v1/webhooks/create': {
    auth: 'token',
    probes: [
      {
        what: 'in A’s org',
        phase: 'foreign',
        expect: 404,
        request: (s) =>
          post('/v1/webhooks/create', {
            url: 'http://127.0.0.1:9/b',
            events: ['test.quarantined'],
            org_url_slug: s.a.slug,
          }),
      },
      {
        what: 'B’s own',
        phase: 'same-ref',
        expect: 'own',
        request: () =>
          post('/v1/webhooks/create', { url: 'http://127.0.0.1:9/b', events: ['test.quarantined'] }),
      },
    ],
  },
  'POST /v1/webhooks/list': {
    auth: 'token',
    probes: [
      {
        what: 'B’s list',
        phase: 'foreign',
        expect: 'own',
        request: () => post('/v1/webhooks/list', {}),
        check: emptyList('webhooks'),
      },
      {
        what: 'A’s list',
        phase: 'foreign',
        expect: 404,
        request: (s) => post('/v1/webhooks/list', { org_url_slug: s.a.slug }),
      },
      {
        what: 'B’s list, with B’s own webhook',
        phase: 'same-ref',
        expect: 'own',
        request: () => post('/v1/webhooks/list', {}),
      },
    ],
  },
  'POST /v1/webhooks/delete': { auth: 'token', probes: foreignWebhookProbes('/v1/webhooks/delete') },
  'POST /v1/webhooks/deliveries': { auth: 'token', probes: foreignWebhookProbes('/v1/webhooks/deliveries') },

  // The web dashboard: B signed in (its session cookie) asks for A's pages, by A's org and under its own.
  'GET /': {
    auth: 'session',
    probes: [
      {
        what: 'the home page sends B to B’s organization',
        phase: 'foreign',
        expect: 302,
        request: () => ({ method: 'GET', url: '/' }),
        check: (res, s) => expect(res.headers['location']).toBe(`/${s.b.slug}`),
      },
    ],
  },
  'GET /:org': {
    auth: 'session',
    probes: [
      { what: 'A’s overview', phase: 'foreign', expect: 404, request: (s) => get(paths.org(s.a.slug)) },
      { what: 'B’s overview', phase: 'same-ref', expect: 'own', request: (s) => get(paths.org(s.b.slug)) },
    ],
  },
  'GET /:org/repos/*': {
    auth: 'session',
    probes: [
      ...aPages.map(
        ([what, url]): Probe => ({
          what: `A’s ${what} page`,
          phase: 'foreign',
          expect: 404,
          request: (s) => get(url(s, s.a.slug)),
        }),
      ),
      ...aPages.map(
        ([what, url]): Probe => ({
          what: `A’s ${what} page under B’s org`,
          phase: 'foreign',
          expect: 404,
          request: (s) => get(url(s, s.b.slug)),
        }),
      ),
      ...aPages.map(
        ([what, url]): Probe => ({
          what: `A’s ${what} page under B’s org, B having the same-named repository`,
          phase: 'same-ref',
          // The repository and its `main` queue are B's own now; A's test, run and PR ids are not.
          expect: what === 'repository' || what === 'queue' ? 'own' : 404,
          request: (s) => get(url(s, s.b.slug)),
        }),
      ),
    ],
  },
  'GET /:org/flaky-tests/test/:id': {
    auth: 'session',
    probes: [
      {
        what: 'the CLI’s link to A’s test',
        phase: 'foreign',
        expect: 404,
        request: (s) => get(cliTestLink(s, s.a.slug)),
      },
      {
        what: 'the CLI’s link to A’s test under B’s org',
        phase: 'foreign',
        expect: 404,
        request: (s) => get(cliTestLink(s, s.b.slug)),
      },
      {
        what: 'the CLI’s link to A’s test under B’s org, B having the same-named repository',
        phase: 'same-ref',
        expect: 404,
        request: (s) => get(cliTestLink(s, s.b.slug)),
      },
    ],
  },
  'POST /:org/repos/*': {
    auth: 'session',
    probes: (['quarantine', 'flag'] as const).flatMap((action): Probe[] => {
      const form: Record<string, string> =
        action === 'quarantine' ? { setting: 'NEVER_QUARANTINE' } : { flagged: 'true' };
      const url = (s: Tenants, org: string, id: string) => `${paths.test(org, s.a.repo, id)}/${action}`;
      return [
        {
          what: `${action} A’s test`,
          phase: 'foreign',
          expect: 404,
          request: (s) => postForm(url(s, s.a.slug, s.a.flakyTestId), form),
        },
        {
          what: `${action} A’s test under B’s org`,
          phase: 'foreign',
          expect: 404,
          request: (s) => postForm(url(s, s.b.slug, s.a.flakyTestId), form),
        },
        {
          what: `${action} A’s test in B’s same-named repository`,
          phase: 'same-ref',
          expect: 404,
          request: (s) => postForm(url(s, s.b.slug, s.a.pinnedTestId), form),
        },
      ];
    }),
  },
  'POST /:org/webhooks': {
    auth: 'session',
    probes: [
      {
        what: 'B adds a webhook to A’s org from the dashboard',
        phase: 'foreign',
        expect: 404,
        request: (s) =>
          postForm(`/${s.a.slug}/webhooks`, { url: 'http://127.0.0.1:9/b', events: 'test.quarantined' }),
      },
    ],
  },
  'POST /:org/webhooks/:id/delete': {
    auth: 'session',
    probes: [
      {
        what: 'B deletes A’s webhook under A’s org',
        phase: 'foreign',
        expect: 404,
        request: (s) => postForm(`/${s.a.slug}/webhooks/${s.a.webhookId}/delete`, {}),
      },
      {
        what: 'B deletes A’s webhook under its own org',
        phase: 'foreign',
        expect: 404,
        request: (s) => postForm(`/${s.b.slug}/webhooks/${s.a.webhookId}/delete`, {}),
      },
    ],
  },
  'POST /login': {
    auth: 'public',
    probes: [
      {
        what: 'B signs in and asks to be sent to A’s test page: it gets a session of B only',
        phase: 'foreign',
        expect: 303,
        request: (s) =>
          postForm('/login', { token: s.b.token, next: paths.test(s.a.slug, s.a.repo, s.a.flakyTestId) }),
        check: (res, s) => {
          expect(res.headers['location']).toBe(paths.test(s.a.slug, s.a.repo, s.a.flakyTestId));
          expect(String(res.headers['set-cookie'])).toMatch(/^mainline_session=/);
        },
      },
    ],
  },
  'POST /logout': {
    auth: 'session',
    probes: [{ what: 'B signs out', phase: 'same-ref', expect: 303, request: () => postForm('/logout', {}) }],
  },
};

/** Routes that hold no tenant data, or are authenticated by something other than an API token. */
const EXEMPT: Record<string, string> = {
  'GET /v1/status': 'service status (Trunk’s shape), no token, no tenant data',
  'GET /healthz': 'liveness, no tenant data',
  'GET /readyz': 'readiness, no tenant data',
  'GET /metrics':
    'operator metrics: HTTP by route template and status; merge queues named (organization, repository, branch) only behind MAINLINE_METRICS_TOKEN, else added up',
  'GET /openapi.json': 'the API description',
  'GET /login': 'the sign-in form (a signed-in visitor is sent to their own organization)',
  'GET /assets/app.css': 'the dashboard’s stylesheet',
  'POST /v1/flakytests-cli/upload-metrics':
    'uploader telemetry: no token, read and discarded, stores nothing',
  'POST /webhooks/github':
    'GitHub deliveries, authenticated by the installation’s webhook secret (HMAC), not by an org token; covered by the GitHub tests',
  'POST /webhooks/gitlab':
    'GitLab deliveries, authenticated by the webhook’s secret token, routed to the organization granted the namespace; covered by gitlab-webhook.test.ts',
};

/** Swagger UI's pages and assets. */
const EXEMPT_PREFIXES: Record<string, string> = { '/docs': 'the interactive API documentation (static)' };

/**
 * The documented rule for pages: a GET route outside /v1 with no case of its own (the web
 * dashboard's pages as they appear) is checked generically by `pages outside /v1`: requested with
 * every path parameter naming A's data (org slug, repository, test, run), anonymously and with B's
 * API token, it must not fail with 5xx nor show anything of A's. Pages that need a signed-in session
 * should get a CASES entry with B's session once the dashboard's sign-in exists.
 */
const isPageRule = (method: string, url: string) => method === 'GET' && !url.startsWith('/v1/');

function registerBody(s: Tenants, number: number, headBranch: string) {
  return { repo: s.a.repo, number, title: 'B’s PR', author: 'b', headBranch, baseBranch: 'main' };
}

async function bCreateBundle(s: Tenants): Promise<{ url: string }> {
  const res = await asB(s, post('/v1/metrics/createBundleUpload', { repo: s.a.repo, orgUrlSlug: s.b.slug }));
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function send(s: Tenants, req: Req, auth: Record<string, string>) {
  const json = req.body !== undefined;
  const form = req.form !== undefined ? new URLSearchParams(req.form).toString() : undefined;
  return s.t.app.inject({
    method: req.method as 'GET',
    url: req.url,
    headers: {
      ...(json ? { 'content-type': 'application/json' } : {}),
      ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...auth,
      ...req.headers,
    },
    ...(json
      ? { payload: JSON.stringify(req.body) }
      : form !== undefined
        ? { payload: form }
        : req.payload
          ? { payload: req.payload }
          : {}),
  });
}

/** Dashboard sessions of A and B (cookie headers) and B's CSRF token; made once the tenants exist. */
const web = { a: '', b: '', bCsrf: '' };

async function signIn(s: Tenants, token: string): Promise<string> {
  const res = await send(s, postForm('/login', { token }), {});
  expect(res.statusCode, res.body).toBe(303);
  const cookie = String(res.headers['set-cookie']).split(';')[0] ?? '';
  expect(cookie).toMatch(/^mainline_session=./);
  return cookie;
}

let transport = 0;
/** B's request, authenticated as `auth` says; API tokens alternate between x-api-token and Bearer. */
function asB(s: Tenants, req: Req, auth: Case['auth'] = 'token') {
  if (auth === 'session') {
    const withCsrf = req.form !== undefined ? { ...req, form: { _csrf: web.bCsrf, ...req.form } } : req;
    return send(s, withCsrf, { cookie: web.b });
  }
  if (auth !== 'token') return send(s, req, {});
  transport += 1;
  const header: Record<string, string> =
    transport % 2 === 0 ? { 'x-api-token': s.b.token } : { authorization: `Bearer ${s.b.token}` };
  return send(s, req, header);
}

/** Markers of A's data in a response that the request did not carry itself. */
function leaks(s: Tenants, req: Req, res: LightMyRequestResponse): string[] {
  const sent = `${req.url} ${JSON.stringify(req.body ?? '')} ${JSON.stringify(req.form ?? '')} ${req.payload?.toString('latin1') ?? ''}`;
  const got = `${JSON.stringify(res.headers)} ${res.body}`;
  return s.markers.filter((m) => got.includes(m) && !sent.includes(m));
}

function checkAnswer(res: LightMyRequestResponse, expected: Expectation): void {
  if (expected === 'own') {
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(200);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return;
  }
  expect(res.statusCode, res.body.slice(0, 500)).toBe(expected);
  if (String(res.headers['content-type']).startsWith('application/json'))
    expect(res.json()).toEqual({ error: { code: expect.any(String), message: expect.any(String) } });
}

const probes = (phase: Probe['phase']) =>
  Object.entries(CASES)
    .flatMap(([route, c]) =>
      c.probes.filter((p) => p.phase === phase).map((p) => ({ name: `${route}: ${p.what}`, route, c, p })),
    )
    .sort((x, y) => Number(x.p.storesANames ?? false) - Number(y.p.storesANames ?? false));

describe('tenant isolation, route by route', () => {
  let s: Tenants;
  let baseline: Record<string, string[]>;

  /** B sends the probe's request: the answer it expects, nothing of A's in it, and A's data unchanged after. */
  const runProbe = async ({ p, c }: ReturnType<typeof probes>[number]) => {
    const req = await p.request(s);
    const res = await asB(s, req, c.auth);
    checkAnswer(res, p.expect);
    expect(leaks(s, req, res), 'A’s data in B’s answer').toEqual([]);
    p.check?.(res, s);
    expect(await snapshotTenant(s), 'A’s data after B’s request').toEqual(baseline);
  };

  /** Every route the app serves, read from the app under test. */
  let served: ReturnType<typeof listRoutes>;

  beforeAll(async () => {
    s = await seedTenants();
    served = listRoutes(s.t.app);
    web.a = await signIn(s, s.a.token);
    web.b = await signIn(s, s.b.token);
    const home = await send(s, get(paths.org(s.b.slug)), { cookie: web.b });
    expect(home.statusCode, home.body).toBe(200);
    web.bCsrf = home.body.match(/name="_csrf" value="([^"]+)"/)?.[1] ?? '';
    expect(web.bCsrf, 'B’s CSRF token on its own page').not.toBe('');
    baseline = await snapshotTenant(s);
  });
  afterAll(() => s.scenario.close());

  it('every route the app serves has an isolation case or an exemption with a reason', () => {
    const keys = served.map(routeKey);
    expect(keys, 'the route list was read').toContain('POST /v1/repositories/get');
    expect(keys).toContain('PUT /v1/metrics/bundle-uploads/:id');
    const covered = (k: string, method: string, url: string) =>
      k in CASES ||
      k in EXEMPT ||
      Object.keys(EXEMPT_PREFIXES).some((p) => url === p || url.startsWith(`${p}/`)) ||
      isPageRule(method, url);
    const missing = served.filter((r) => !covered(routeKey(r), r.method, r.url)).map(routeKey);
    expect(
      missing,
      'routes with no isolation case: add them to CASES (or to EXEMPT, with the reason)',
    ).toEqual([]);
    const stale = [...Object.keys(CASES), ...Object.keys(EXEMPT)].filter((k) => !keys.includes(k));
    expect(stale, 'cases of routes the app does not serve').toEqual([]);
    // The route list is complete: everything the OpenAPI document describes is in it.
    const documented = openApiOperations(s.t.app).map(routeKey);
    expect(documented.filter((k) => !keys.includes(k))).toEqual([]);
  });

  it('A sees its own pages (so B’s 404s on them mean something)', async () => {
    for (const [what, url] of aPages) {
      const res = await send(s, get(url(s, s.a.slug)), { cookie: web.a });
      expect(res.statusCode, `A’s ${what} page: ${res.body.slice(0, 300)}`).toBe(200);
      expect(
        s.markers.some((m) => res.body.includes(m)),
        `A’s ${what} page shows A’s data`,
      ).toBe(true);
    }
    // The CLI's link to A's test takes A to it.
    const link = await send(s, get(cliTestLink(s, s.a.slug)), { cookie: web.a });
    expect(link.statusCode, link.body).toBe(302);
    expect(link.headers['location']).toBe(paths.test(s.a.slug, s.a.repo, s.a.flakyTestId));
    // A's own reads may fill caches of A's (the dashboard's daily figures): B's requests start from here.
    baseline = await snapshotTenant(s);
  });

  it('every route with a case needs a token or a session (or is signed), and every exempt route does not ask for one', async () => {
    for (const [route, c] of Object.entries(CASES)) {
      if (c.auth === 'signed-url' || c.auth === 'public') continue;
      const req = await c.probes[0]!.request(s);
      const res = await send(s, req, {});
      if (c.auth === 'token') expect(res.statusCode, `${route} without a token`).toBe(401);
      else {
        expect([302, 303], `${route} without a session`).toContain(res.statusCode);
        expect(res.headers['location'], `${route} without a session`).toMatch(/^\/login/);
      }
    }
    for (const route of Object.keys(EXEMPT)) {
      const [method, url] = route.split(' ') as [string, string];
      const res = await send(s, { method, url, ...(method === 'POST' ? { body: {} } : {}) }, {});
      expect(res.body, `${route} is exempt but asks for an API token: give it a case`).not.toContain(
        'Missing API token',
      );
    }
  });

  it.each(probes('foreign').map((x) => [x.name, x] as const))('%s', (_name, probe) => runProbe(probe));

  it('pages outside /v1 (the dashboard rule) show nothing of A’s to an anonymous visitor or to B', async () => {
    // The exempt ones too (docs, metrics, health): no GET outside /v1 may show A's data.
    const pages = served.filter((r) => isPageRule(r.method, r.url));
    expect(pages.map(routeKey)).toContain('GET /metrics');
    for (const r of pages) {
      const url = r.url
        .replace(/:(\w+)/g, (_m, name: string) => encodeURIComponent(paramValue(s, name)))
        .replace(/\*$/, '');
      const auths: Record<string, string>[] = [
        {},
        { 'x-api-token': s.b.token },
        { authorization: `Bearer ${s.b.token}` },
        { cookie: web.b },
      ];
      for (const auth of auths) {
        const req = { method: 'GET', url };
        const res = await send(s, req, auth);
        expect(res.statusCode, `${url}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
        expect(leaks(s, req, res), `A’s data on ${url}`).toEqual([]);
      }
    }
    expect(await snapshotTenant(s)).toEqual(baseline);
  });

  it('B makes its own repository with A’s exact reference, and its own queue on A’s branch', async () => {
    for (const req of [
      post('/v1/repositories/create', { repo: s.a.repo }),
      post('/v1/createQueue', queueRef(s)),
    ]) {
      const res = await asB(s, req);
      expect(res.statusCode, `${req.url}: ${res.body}`).toBe(200);
    }
    expect(await snapshotTenant(s)).toEqual(baseline);
  });

  it.each(probes('same-ref').map((x) => [x.name, x] as const))('%s', (_name, probe) => runProbe(probe));
});

function paramValue(s: Tenants, name: string): string {
  const n = name.toLowerCase();
  if (n.includes('org') || n === 'slug') return s.a.slug;
  if (n === 'host') return s.a.repo.host;
  if (n === 'owner') return s.a.repo.owner;
  if (n === 'name' || n === 'repo' || n === 'repository') return s.a.repo.name;
  if (n.includes('branch')) return s.a.targetBranch;
  if (n.includes('run')) return s.a.runId;
  if (n === 'number' || n.includes('pr')) return String(s.a.prNumber);
  if (n.includes('webhook') || n.includes('hook')) return s.a.webhookId;
  return s.a.flakyTestId;
}

describe('the plain-git forge keeps organizations’ repositories apart', () => {
  let s: GitScenario;
  afterAll(() => s.close());

  it('B, naming A’s repository, can neither read A’s branches nor merge into A’s main', async () => {
    s = await GitScenario.create({ directMergeMode: 'off' });
    await s.openPr(2, { 'a.txt': 'A’s unreviewed work\n' }, 'A’s unsubmitted PR');
    const mainBefore = s.bareGit('rev-parse', 'main');
    const b = await s.t.token('globex');
    const asB = (url: string, body: object) => s.t.post(url, body, b);

    const created = await asB('/v1/git/createRepository', { repo: REPO });
    expect(created.statusCode).toBe(200);
    expect.soft(created.json().path, 'B is handed A’s bare repository').not.toBe(s.bare);
    const pr = await asB('/v1/git/registerPullRequest', {
      repo: REPO,
      number: 7,
      title: 'B borrows A’s branch',
      author: 'b',
      headBranch: 'feature-2',
      baseBranch: 'main',
    });
    expect.soft(pr.statusCode, `B registers a PR on A’s branch: ${pr.body}`).toBe(400);
    expect((await asB('/v1/createQueue', { repo: REPO, targetBranch: 'main' })).statusCode).toBe(200);
    if (pr.statusCode === 200) {
      expect(
        (await asB('/v1/submitPullRequest', { repo: REPO, targetBranch: 'main', pr: { number: 7 } }))
          .statusCode,
      ).toBe(200);
      await s.settle();
      const queue = await queueId(s.t, 'globex');
      const runs = Object.values((await storedQueueState(s.t.db.database.db, queue)).runs);
      for (const run of runs) {
        if (run.testBranchSha === null) continue;
        await asB('/v1/git/reportStatus', {
          repo: REPO,
          sha: run.testBranchSha,
          context: 'ci',
          state: 'success',
        });
      }
      await s.settle();
    }
    expect(s.bareGit('rev-parse', 'main'), 'A’s main after B’s queue ran').toBe(mainBefore);
    expect(
      s.bareGit('for-each-ref', '--format=%(refname)', 'refs/heads/mainline-merge'),
      'B’s test branches in A’s repository',
    ).toBe('');
  });
});
