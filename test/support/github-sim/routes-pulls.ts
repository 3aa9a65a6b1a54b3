import {
  HttpError,
  intParam,
  noContent,
  ok,
  optionalBoolean,
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
  addComment,
  closePull,
  commentJson,
  deleteComment,
  editComment,
  emitPull,
  findComment,
  findPull,
  mergePull,
  openPull,
  pullJson,
  reopenPull,
} from './ops-pulls.ts';
import { collaboratorOf, isoNow, userJson } from './state.ts';
import type { JsonObject } from './types.ts';

const R = '/repos/{owner}/{repo}';
const MERGE_METHODS = ['merge', 'squash', 'rebase'] as const;

async function listPulls(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const state = ctx.query.get('state') ?? 'open';
  const head = ctx.query.get('head');
  const base = ctx.query.get('base');
  const pulls = [...repo.pulls.values()]
    .filter((pr) => state === 'all' || pr.state === state)
    .filter((pr) => head === null || `${repo.owner}:${pr.headRef}`.toLowerCase() === head.toLowerCase())
    .filter((pr) => base === null || pr.baseRef === base)
    .sort((a, b) => b.number - a.number);
  const page = paginate(ctx, pulls);
  const items: JsonObject[] = [];
  for (const pr of page.items) items.push(await pullJson(ctx.core, repo, pr));
  return ok(items, 200, page.headers);
}

async function createPull(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const pr = await openPull(ctx.core, ctx.tx, repo, {
    title: requireString(ctx.body, 'title'),
    head: requireString(ctx.body, 'head'),
    base: requireString(ctx.body, 'base'),
    body: optionalString(ctx.body, 'body'),
    draft: optionalBoolean(ctx.body, 'draft') ?? false,
    author: ctx.actor.login,
  });
  return ok(await pullJson(ctx.core, repo, pr, 'rest'), 201);
}

async function getPull(ctx: RequestContext) {
  const repo = repoOf(ctx);
  return ok(await pullJson(ctx.core, repo, findPull(repo, intParam(ctx, 'number')), 'rest'));
}

async function updatePull(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const pr = findPull(repo, intParam(ctx, 'number'));
  const title = optionalString(ctx.body, 'title');
  const body = optionalString(ctx.body, 'body');
  const base = optionalString(ctx.body, 'base');
  const state = optionalEnum(ctx.body, 'state', ['open', 'closed'] as const);
  const changes: JsonObject = {};
  if (title !== null && title !== pr.title) {
    changes['title'] = { from: pr.title };
    pr.title = title;
  }
  if (body !== null && body !== pr.body) {
    changes['body'] = { from: pr.body };
    pr.body = body;
  }
  if (base !== null && base !== pr.baseRef) {
    if ((await repo.git.branch(base)) === null) {
      throw new HttpError(422, 'Validation Failed', {
        errors: [{ resource: 'PullRequest', field: 'base', code: 'invalid' }],
      });
    }
    changes['base'] = { ref: { from: pr.baseRef } };
    pr.baseRef = base;
  }
  if (Object.keys(changes).length > 0) {
    pr.updatedAt = isoNow();
    await emitPull(ctx.core, ctx.tx, repo, pr, 'edited', ctx.actor.login, { changes });
  }
  if (state === 'closed') await closePull(ctx.core, ctx.tx, repo, pr, ctx.actor.login);
  if (state === 'open') await reopenPull(ctx.core, ctx.tx, repo, pr, ctx.actor.login);
  return ok(await pullJson(ctx.core, repo, pr, 'rest'));
}

async function mergePullRoute(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const pr = findPull(repo, intParam(ctx, 'number'));
  const sha = await mergePull(
    ctx.core,
    ctx.tx,
    repo,
    pr,
    {
      method: optionalEnum(ctx.body, 'merge_method', MERGE_METHODS) ?? 'merge',
      sha: optionalString(ctx.body, 'sha'),
      title: optionalString(ctx.body, 'commit_title'),
      message: optionalString(ctx.body, 'commit_message'),
    },
    ctx.actor.login,
  );
  return ok({ sha, merged: true, message: 'Pull Request successfully merged' });
}

async function listComments(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const number = intParam(ctx, 'number');
  findPull(repo, number);
  const comments = [...repo.comments.values()].filter((c) => c.issue === number);
  const page = paginate(ctx, comments);
  return ok(
    page.items.map((c) => commentJson(ctx.core, repo, c)),
    200,
    page.headers,
  );
}

async function createComment(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const body = requireString(ctx.body, 'body');
  const comment = addComment(ctx.core, ctx.tx, repo, intParam(ctx, 'number'), body, ctx.actor.login);
  return ok(commentJson(ctx.core, repo, comment), 201);
}

async function getComment(ctx: RequestContext) {
  const repo = repoOf(ctx);
  return ok(commentJson(ctx.core, repo, findComment(repo, intParam(ctx, 'id'))));
}

async function updateComment(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const comment = findComment(repo, intParam(ctx, 'id'));
  editComment(ctx.core, ctx.tx, repo, comment, requireString(ctx.body, 'body'), ctx.actor.login);
  return ok(commentJson(ctx.core, repo, comment));
}

async function removeComment(ctx: RequestContext) {
  const repo = repoOf(ctx);
  deleteComment(ctx.core, ctx.tx, repo, findComment(repo, intParam(ctx, 'id')), ctx.actor.login);
  return noContent();
}

/** GitHub's legacy `permission` folds maintain into write and triage into read; `role_name` keeps them. */
const LEGACY_PERMISSION = {
  admin: 'admin',
  maintain: 'write',
  write: 'write',
  triage: 'read',
  read: 'read',
  none: 'none',
};

async function collaboratorPermission(ctx: RequestContext) {
  const repo = repoOf(ctx);
  const login = ctx.params['username'] ?? '';
  const { role } = collaboratorOf(repo, login);
  return ok({ permission: LEGACY_PERMISSION[role], role_name: role, user: userJson(login) });
}

export const pullRoutes: Route[] = [
  route('GET', `${R}/collaborators/{username}/permission`, collaboratorPermission),
  route('GET', `${R}/pulls`, listPulls),
  route('POST', `${R}/pulls`, createPull),
  route('GET', `${R}/pulls/{number}`, getPull),
  route('PATCH', `${R}/pulls/{number}`, updatePull),
  route('PUT', `${R}/pulls/{number}/merge`, mergePullRoute),
  route('GET', `${R}/issues/{number}/comments`, listComments),
  route('POST', `${R}/issues/{number}/comments`, createComment),
  route('GET', `${R}/issues/comments/{id}`, getComment),
  route('PATCH', `${R}/issues/comments/{id}`, updateComment),
  route('DELETE', `${R}/issues/comments/{id}`, removeComment),
];
