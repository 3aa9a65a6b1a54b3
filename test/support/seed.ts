import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { REPO, type TestApp } from './app.ts';
import { buildTar, metaJson, zstdStored } from './bundles.ts';
import { GitScenario } from './git-scenario.ts';
import { junitXml, upload } from './upload.ts';

/** What organization A holds after seedTenants, by the identifiers another tenant would name. */
export interface TenantA {
  readonly slug: string;
  readonly token: string;
  readonly orgId: string;
  readonly repo: typeof REPO;
  readonly repoId: string;
  readonly targetBranch: string;
  /** FLAKY (failed then passed on one commit), auto-quarantined, ticket linked. */
  readonly flakyTestId: string;
  /** Healthy but ALWAYS_QUARANTINE by override. */
  readonly pinnedTestId: string;
  /** Failed on its only run. */
  readonly failingTestId: string;
  readonly testNames: readonly string[];
  /** PR 1: submitted, under test. PR 2: registered, never submitted. */
  readonly prNumber: number;
  readonly idlePrNumber: number;
  readonly prHeadSha: string;
  /** The head of A's main branch in its bare repository. */
  readonly mainSha: string;
  readonly runId: string;
  readonly testBranchSha: string;
  readonly webhookId: string;
  readonly webhookSecret: string;
  readonly bundleId: string;
  readonly gitPath: string;
  /** When A's uploads happened (the scenario's clock). */
  readonly at: number;
}

export interface Tenants {
  readonly scenario: GitScenario;
  readonly t: TestApp;
  readonly a: TenantA;
  readonly b: { readonly slug: string; readonly token: string; readonly orgId: string };
  /**
   * Strings that only A's data holds (names, titles, ids, secrets). A response to B that contains one
   * its request did not itself carry has leaked A's data.
   */
  readonly markers: readonly string[];
}

const ok = (res: { statusCode: number; body: string }, what: string) =>
  expect(res.statusCode, `${what}: ${res.body}`).toBe(200);

/**
 * Two organizations on one server (real app, real database, plain-git forge on a temporary folder):
 * A ("acme") with everything a tenant can own, B ("globex") with a token and nothing else.
 * The queue runner is stepped by hand (GitScenario), so nothing changes unless a test makes it.
 */
export async function seedTenants(): Promise<Tenants> {
  const tag = randomBytes(4).toString('hex');
  // A's webhook points at loopback (nothing is sent to it), which needs the operator's opt-in.
  const scenario = await GitScenario.create({ directMergeMode: 'off' }, undefined, {
    MAINLINE_WEBHOOK_ALLOW_PRIVATE: '1',
  });
  const { t, token } = scenario;
  const db = t.db.database.db;
  const names = {
    flaky: `a_secret_flaky_${tag}`,
    pinned: `a_secret_pinned_${tag}`,
    failing: `a_secret_failing_${tag}`,
  };
  const sha = `a5ec${tag}`;
  const first = await upload(
    t,
    token,
    [
      {
        name: 'a.xml',
        content: junitXml(
          [
            { name: names.flaky, fail: `a secret failure ${tag}` },
            { name: names.pinned },
            { name: names.failing, fail: `a secret failure ${tag}` },
          ],
          `a_secret_suite_${tag}`,
        ),
      },
    ],
    { sha, branch: 'main' },
  );
  ok(first, 'first upload');
  const second = await upload(
    t,
    token,
    [{ name: 'a.xml', content: junitXml([{ name: names.flaky }], `a_secret_suite_${tag}`) }],
    { sha, branch: 'main' },
  );
  ok(second, 'second upload');
  const org = await db
    .selectFrom('organizations')
    .select('id')
    .where('slug', '=', 'acme')
    .executeTakeFirstOrThrow();
  const repo = await db
    .selectFrom('repositories')
    .select('id')
    .where('org_id', '=', org.id)
    .executeTakeFirstOrThrow();
  const tests = await db
    .selectFrom('test_cases')
    .select(['id', 'name'])
    .where('repo_id', '=', repo.id)
    .execute();
  const idOf = (name: string) => {
    const found = tests.find((x) => x.name === name);
    if (found === undefined) throw new Error(`seed: no test ${name}`);
    return found.id;
  };
  const scope = { repo: REPO, org_url_slug: 'acme' };
  ok(
    await t.post(
      '/v1/flaky-tests/set-quarantine-override',
      {
        ...scope,
        test_id: idOf(names.pinned),
        setting: 'ALWAYS_QUARANTINE',
        reason: `a secret reason ${tag}`,
      },
      token,
    ),
    'override',
  );
  ok(
    await t.post(
      '/v1/flaky-tests/link-ticket-to-test-case',
      { repo: REPO, test_case_id: idOf(names.flaky), external_ticket_id: `A-SECRET-${tag}` },
      token,
    ),
    'ticket',
  );
  ok(
    await t.post(
      '/v1/flaky-tests/update-repository-settings',
      { ...scope, settings: { ticket_url_template: `https://tickets.a-secret-${tag}.example/{id}` } },
      token,
    ),
    'settings',
  );
  const flaky = (
    await t.post('/v1/flaky-tests/get-test-details', { ...scope, test_id: idOf(names.flaky) }, token)
  ).json();
  expect(flaky.test, 'the seeded flaky test').toMatchObject({
    status: { value: 'flaky' },
    quarantined: true,
  });

  await scenario.openPr(1, { 'a.txt': `a secret change ${tag}\n` }, `A secret PR ${tag}`);
  await scenario.openPr(2, { 'b.txt': `another secret ${tag}\n` }, `A secret idle PR ${tag}`);
  await scenario.submit(1);
  await scenario.settle();
  const runs = await scenario.runsInProgress();
  expect(runs, 'one run testing PR 1').toHaveLength(1);
  const run = runs[0]!;
  ok(
    await t.post(
      '/v1/git/reportStatus',
      {
        repo: REPO,
        sha: run.sha,
        context: `a-secret-ci-${tag}`,
        state: 'pending',
        url: `https://ci.a-secret-${tag}.example/1`,
      },
      token,
    ),
    'pending status',
  );
  const prHeadSha = scenario.bareGit('rev-parse', 'feature-1');

  const hook = await t.post(
    '/v1/webhooks/create',
    {
      url: `http://127.0.0.1:9/a-secret-hook-${tag}`,
      events: ['test.status_changed', 'test.quarantined', 'pull_request.merged'],
      description: `a secret webhook ${tag}`,
    },
    token,
  );
  ok(hook, 'webhook');

  const created = await t.post('/v1/metrics/createBundleUpload', { repo: REPO, orgUrlSlug: 'acme' }, token);
  ok(created, 'createBundleUpload');
  const bundle = await tenantBundle(REPO, [
    junitXml([{ name: `a_secret_bundled_${tag}` }], `a_secret_bundle_suite_${tag}`),
  ]);
  const put = await putBundle(t, created.json().url, bundle);
  ok(put, 'bundle PUT');

  const b = { slug: 'globex', token: await t.token('globex') };
  const bOrg = await db
    .selectFrom('organizations')
    .select('id')
    .where('slug', '=', 'globex')
    .executeTakeFirstOrThrow();
  const a: TenantA = {
    slug: 'acme',
    token,
    orgId: org.id,
    repo: REPO,
    repoId: repo.id,
    targetBranch: 'main',
    flakyTestId: idOf(names.flaky),
    pinnedTestId: idOf(names.pinned),
    failingTestId: idOf(names.failing),
    testNames: Object.values(names),
    prNumber: 1,
    idlePrNumber: 2,
    prHeadSha,
    mainSha: scenario.bareGit('rev-parse', 'main'),
    runId: run.id,
    testBranchSha: run.sha,
    webhookId: hook.json().id,
    webhookSecret: hook.json().secret,
    bundleId: created.json().id,
    gitPath: scenario.bare,
    at: scenario.clock,
  };
  const markers = [
    tag,
    a.flakyTestId,
    a.pinnedTestId,
    a.failingTestId,
    a.prHeadSha,
    a.mainSha,
    a.runId,
    a.testBranchSha,
    a.webhookId,
    a.webhookSecret,
    a.bundleId,
    a.gitPath,
    a.repoId,
    a.orgId,
  ];
  return { scenario, t, a, b: { ...b, orgId: bOrg.id }, markers };
}

/** meta.json of a bundle for `repo` listing `count` JUnit files junit/0… (as trunk-analytics-cli writes it). */
export function bundleMeta(
  repo: { host: string; owner: string; name: string },
  count: number,
  extra: Record<string, unknown> = {},
): string {
  return metaJson({
    variant: '',
    repo: {
      repo,
      repo_url: `https://${repo.host}/${repo.owner}/${repo.name}.git`,
      repo_head_sha: 'feedbeef',
      repo_head_branch: 'refs/heads/main',
    },
    file_sets: [
      {
        file_set_type: 'Junit',
        glob: '**/*.xml',
        files: Array.from({ length: count }, (_, i) => ({
          original_path: `/ci/junit${i}.xml`,
          path: `junit/${i}`,
          owners: [],
        })),
      },
    ],
    ...extra,
  });
}

/** A bundle.tar.zstd as trunk-analytics-cli makes it, for `repo`, holding the given JUnit files. */
export async function tenantBundle(
  repo: { host: string; owner: string; name: string },
  files: readonly string[],
  extra: Record<string, unknown> = {},
): Promise<Uint8Array> {
  const tar = await buildTar([
    { name: 'meta.json', data: bundleMeta(repo, files.length, extra) },
    ...files.map((data, i) => ({ name: `junit/${i}`, data })),
  ]);
  return zstdStored(tar);
}

/** PUTs a bundle to the URL createBundleUpload answered (only its path and query are used). */
export function putBundle(t: TestApp, url: string, bundle: Uint8Array) {
  const u = new URL(url);
  return t.app.inject({ method: 'PUT', url: u.pathname + u.search, payload: Buffer.from(bundle) });
}

/**
 * Everything of organization A in the database, and its bare repository's refs, as one comparable
 * value. Rows are A's by org_id, repo_id, test_case_id, queue_id or endpoint_id; tables are read by
 * introspection, so tables added later are covered. Left out: api_tokens (last_used_at moves with
 * every request), list snapshots (a read makes them) and instance secrets.
 */
export async function snapshotTenant(tenants: Tenants): Promise<Record<string, string[]>> {
  const { t, a } = tenants;
  const db = t.db.database.db;
  const skip = /^(kysely_migration.*|api_tokens|list_snapshots?|list_snapshot_rows|instance_secrets)$/;
  const tables = (await db.introspection.getTables()).map((x) => x.name).filter((n) => !skip.test(n));
  const repoIds = new Set(
    (await db.selectFrom('repositories').select('id').where('org_id', '=', a.orgId).execute()).map(
      (r) => r.id,
    ),
  );
  const testIds = new Set(
    (
      await db
        .selectFrom('test_cases')
        .select('id')
        .where('repo_id', 'in', [...repoIds])
        .execute()
    ).map((r) => r.id),
  );
  const queueIds = new Set(
    (
      await db
        .selectFrom('merge_queues')
        .select('id')
        .where('repo_id', 'in', [...repoIds])
        .execute()
    ).map((r) => r.id),
  );
  const endpointIds = new Set(
    (await db.selectFrom('webhook_endpoints').select('id').where('org_id', '=', a.orgId).execute()).map(
      (r) => r.id,
    ),
  );
  const owned = (table: string, row: Record<string, unknown>): boolean =>
    (table === 'organizations' && row['id'] === a.orgId) ||
    row['org_id'] === a.orgId ||
    repoIds.has(String(row['repo_id'])) ||
    testIds.has(String(row['test_case_id'])) ||
    queueIds.has(String(row['queue_id'])) ||
    endpointIds.has(String(row['endpoint_id']));
  const snapshot: Record<string, string[]> = {};
  for (const table of tables.sort()) {
    // biome-ignore lint/suspicious/noExplicitAny: tables are read by name, whatever their shape.
    const rows = (await (db as any).selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
    const mine = rows
      .filter((r) => owned(table, r))
      .map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)));
    if (mine.length > 0) snapshot[table] = mine.sort();
  }
  snapshot['git refs'] = execFileSync(
    'git',
    ['--git-dir', a.gitPath, 'for-each-ref', '--format=%(refname) %(objectname)'],
    {
      encoding: 'utf8',
    },
  )
    .trim()
    .split('\n');
  return snapshot;
}
