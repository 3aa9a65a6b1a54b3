import { isSha } from './git.ts';
import {
  HttpError,
  intParam,
  ok,
  optionalEnum,
  optionalString,
  paginate,
  type RequestContext,
  type Route,
  repoOf,
  requireString,
  route,
} from './http.ts';
import {
  addStatus,
  CHECK_CONCLUSIONS,
  CHECK_STATUSES,
  checkRunJson,
  checkRunsAt,
  combinedStatus,
  createCheckRun,
  findCheckRun,
  STATUS_STATES,
  statusJson,
  updateCheckRun,
} from './ops-checks.ts';
import { globMatch, resolveOr404 } from './ops-git.ts';
import { userJson } from './state.ts';
import type { CheckRunState, JsonObject } from './types.ts';

const R = '/repos/{owner}/{repo}';

async function postStatus(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const sha = ctx.params['sha'] ?? '';
  if (!isSha(sha) || (await repo.git.resolve(sha)) === null) {
    throw new HttpError(422, `No commit found for SHA: ${sha}`);
  }
  const state = optionalEnum(ctx.body, 'state', STATUS_STATES);
  if (state === null) requireString(ctx.body, 'state');
  const status = await addStatus(
    ctx.core,
    ctx.tx,
    repo,
    sha,
    {
      state: state ?? 'pending',
      context: optionalString(ctx.body, 'context') ?? 'default',
      description: optionalString(ctx.body, 'description'),
      targetUrl: optionalString(ctx.body, 'target_url'),
    },
    ctx.actor.login,
  );
  return ok(statusJson(ctx.core, repo, status), 201);
}

async function getCombinedStatus(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const sha = await resolveOr404(
    repo,
    ctx.params['ref'] ?? '',
    `No commit found for SHA: ${ctx.params['ref']}`,
  );
  return ok(combinedStatus(ctx.core, repo, sha));
}

async function listStatuses(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const sha = await resolveOr404(
    repo,
    ctx.params['ref'] ?? '',
    `No commit found for SHA: ${ctx.params['ref']}`,
  );
  const statuses = repo.statuses.filter((s) => s.sha === sha).reverse();
  const page = paginate(ctx, statuses);
  return ok(
    page.items.map((s) => statusJson(ctx.core, repo, s)),
    200,
    page.headers,
  );
}

function output(body: JsonObject): CheckRunState['output'] | null {
  const value = body['output'];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new HttpError(422, "Invalid request.\n\nFor 'properties/output', is not an object.");
  const o = value as JsonObject;
  return {
    title: optionalString(o, 'title'),
    summary: optionalString(o, 'summary'),
    text: optionalString(o, 'text'),
  };
}

async function postCheckRun(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const headSha = requireString(ctx.body, 'head_sha');
  if (!isSha(headSha) || (await repo.git.resolve(headSha)) === null) {
    throw new HttpError(422, 'Validation Failed', {
      errors: [{ resource: 'CheckRun', field: 'head_sha', code: 'invalid' }],
    });
  }
  const app = ctx.actor.appId !== null && ctx.core.credentials.app ? ctx.core.credentials.app : null;
  const run = await createCheckRun(
    ctx.core,
    ctx.tx,
    repo,
    {
      name: requireString(ctx.body, 'name'),
      headSha,
      status: optionalEnum(ctx.body, 'status', CHECK_STATUSES) ?? 'queued',
      conclusion: optionalEnum(ctx.body, 'conclusion', CHECK_CONCLUSIONS),
      detailsUrl: optionalString(ctx.body, 'details_url'),
      externalId: optionalString(ctx.body, 'external_id'),
      output: output(ctx.body) ?? { title: null, summary: null, text: null },
    },
    app ?? { id: null, slug: ctx.actor.login },
    ctx.actor.login,
  );
  return ok(checkRunJson(ctx.core, repo, run), 201);
}

async function patchCheckRun(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const run = findCheckRun(repo, intParam(ctx, 'id'));
  await updateCheckRun(
    ctx.core,
    ctx.tx,
    repo,
    run,
    {
      name: optionalString(ctx.body, 'name'),
      status: optionalEnum(ctx.body, 'status', CHECK_STATUSES),
      conclusion: optionalEnum(ctx.body, 'conclusion', CHECK_CONCLUSIONS),
      detailsUrl: optionalString(ctx.body, 'details_url'),
      externalId: optionalString(ctx.body, 'external_id'),
      output: output(ctx.body),
    },
    ctx.actor.login,
  );
  return ok(checkRunJson(ctx.core, repo, run));
}

async function listCheckRuns(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const sha = await resolveOr404(
    repo,
    ctx.params['ref'] ?? '',
    `No commit found for SHA: ${ctx.params['ref']}`,
  );
  const runs = checkRunsAt(repo, sha, ctx.query);
  const page = paginate(ctx, runs);
  return ok(
    { total_count: runs.length, check_runs: page.items.map((r) => checkRunJson(ctx.core, repo, r)) },
    200,
    page.headers,
  );
}

function requiredChecksJson(ctx: RequestContext): JsonObject {
  const repo = repoOf(ctx);
  const branch = ctx.params['branch'] ?? '';
  const protection = repo.protection.get(branch);
  if (!protection) throw new HttpError(404, 'Branch not protected');
  return {
    url: ctx.core.apiUrl(repo, `/branches/${branch}/protection/required_status_checks`),
    strict: protection.strict,
    contexts: protection.contexts,
    checks: protection.contexts.map((context) => ({ context, app_id: null })),
    contexts_url: ctx.core.apiUrl(repo, `/branches/${branch}/protection/required_status_checks/contexts`),
  };
}

async function branchRules(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const branch = ctx.params['branch'] ?? '';
  const rules = repo.rulesets
    .filter((r) => globMatch(r.branch, branch))
    .map((r) => ({
      type: 'required_status_checks',
      ruleset_source_type: 'Repository',
      ruleset_source: `${repo.owner}/${repo.name}`,
      ruleset_id: r.id,
      parameters: {
        strict_required_status_checks_policy: false,
        required_status_checks: r.contexts.map((context) => ({ context })),
      },
    }));
  return ok(rules);
}

function installationJson(ctx: RequestContext, id: number, owner: string): JsonObject {
  const app = ctx.core.credentials.app;
  return {
    id,
    app_id: app?.id ?? null,
    app_slug: app?.slug ?? null,
    account: userJson(owner),
    target_type: 'Organization',
    repository_selection: 'all',
    permissions: { checks: 'write', contents: 'write', pull_requests: 'write', statuses: 'write' },
  };
}

function installationOf(ctx: RequestContext): { id: number; owner: string } {
  const id = intParam(ctx, 'id');
  const owner = ctx.core.credentials.installationOwner(id);
  if (owner === null) throw new HttpError(404, 'Not Found');
  return { id, owner };
}

async function createAccessToken(ctx: RequestContext) {
  const { id } = installationOf(ctx);
  const { token, expiresAt } = ctx.core.credentials.issue(id);
  return ok(
    {
      token,
      expires_at: expiresAt,
      permissions: { checks: 'write', contents: 'write', pull_requests: 'write', statuses: 'write' },
      repository_selection: 'all',
    },
    201,
  );
}

export const checkRoutes: Route[] = [
  route('POST', `${R}/statuses/{sha}`, postStatus),
  route('GET', `${R}/commits/{ref+}/status`, getCombinedStatus),
  route('GET', `${R}/commits/{ref+}/statuses`, listStatuses),
  route('GET', `${R}/commits/{ref+}/check-runs`, listCheckRuns),
  route('POST', `${R}/check-runs`, postCheckRun),
  route('GET', `${R}/check-runs/{id}`, async (ctx) => {
    const repo = repoOf(ctx);
    return ok(checkRunJson(ctx.core, repo, findCheckRun(repo, intParam(ctx, 'id'))));
  }),
  route('PATCH', `${R}/check-runs/{id}`, patchCheckRun),
  route('GET', `${R}/branches/{branch+}/protection/required_status_checks`, async (ctx) =>
    ok(requiredChecksJson(ctx)),
  ),
  route('GET', `${R}/branches/{branch+}/protection`, async (ctx) =>
    ok({ required_status_checks: requiredChecksJson(ctx) }),
  ),
  route('GET', `${R}/rules/branches/{branch+}`, branchRules),
  route(
    'GET',
    `${R}/installation`,
    async (ctx) => {
      const repo = ctx.core.repo(ctx.params['owner'] ?? '', ctx.params['repo'] ?? '');
      return ok(installationJson(ctx, ctx.core.credentials.installationId(repo.owner), repo.owner));
    },
    'app',
  ),
  route(
    'GET',
    '/app',
    async (ctx) => {
      const app = ctx.core.credentials.app;
      return ok({ id: app?.id, slug: app?.slug, name: app?.slug, owner: userJson('simulator') });
    },
    'app',
  ),
  route(
    'GET',
    '/app/installations',
    async (ctx) => {
      const owners = new Set([...ctx.core.repos.values()].map((r) => r.owner));
      return ok(
        [...owners].map((owner) => installationJson(ctx, ctx.core.credentials.installationId(owner), owner)),
      );
    },
    'app',
  ),
  route(
    'GET',
    '/app/installations/{id}',
    async (ctx) => {
      const { id, owner } = installationOf(ctx);
      return ok(installationJson(ctx, id, owner));
    },
    'app',
  ),
  route('POST', '/app/installations/{id}/access_tokens', createAccessToken, 'app'),
  route('GET', '/user', async (ctx) => ok(userJson(ctx.actor.login)), 'user'),
];
