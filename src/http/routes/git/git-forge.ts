import { Type } from 'typebox';
import {
  closePullRequest,
  createGitRepository,
  registerPullRequest,
  reportStatus,
} from '../../../app/queue/git-api.ts';
import { gitForgeOf } from '../../../forge/router.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors, RepoRef } from '../../schemas/common.ts';
import { PR_NUMBER_MAX } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Branch = Type.String({ minLength: 1, maxLength: 255 });
const PrNumber = Type.Integer({ minimum: 1, maximum: PR_NUMBER_MAX });

/**
 * The plain-git forge's own API (Mainline extension): where GitHub has pull requests and a statuses
 * API, a repository on plain git registers its pull requests and its CI reports statuses here.
 * Registered only when the server runs the git forge.
 */
export function registerGitForgeRoutes(app: Api, deps: RouteDeps): void {
  const { ctx } = deps;
  const forge = gitForgeOf(deps.forge);
  if (forge === undefined) return;
  app.post(
    '/git/createRepository',
    {
      schema: {
        tags: ['git forge'],
        summary: 'Create the bare repository to push to (and the Mainline repository); answers its path',
        body: Type.Object({ repo: RepoRef }),
        response: { 200: Type.Object({ path: Type.String() }), ...authenticatedErrors },
      },
    },
    async (request) => createGitRepository(ctx, callerOf(request), forge, request.body.repo),
  );
  app.post(
    '/git/registerPullRequest',
    {
      schema: {
        tags: ['git forge'],
        summary: 'Open (or update) a pull request: a pushed head branch proposed for a base branch',
        body: Type.Object({
          repo: RepoRef,
          number: PrNumber,
          title: Type.String({ minLength: 1, maxLength: 1000 }),
          author: Type.String({ minLength: 1, maxLength: 255 }),
          headBranch: Branch,
          baseBranch: Branch,
        }),
        response: {
          200: Type.Object({
            pullRequest: Type.Object({
              number: Type.Integer(),
              title: Type.String(),
              author: Type.String(),
              headBranch: Type.String(),
              baseBranch: Type.String(),
              headSha: Type.String(),
              state: Type.Literal('open'),
            }),
          }),
          ...authenticatedErrors,
        },
      },
    },
    async (request) => registerPullRequest(ctx, callerOf(request), forge, request.body),
  );
  app.post(
    '/git/closePullRequest',
    {
      schema: {
        tags: ['git forge'],
        summary: 'Close a pull request; queues holding it cancel it',
        body: Type.Object({ repo: RepoRef, number: PrNumber }),
        response: { 200: Type.Object({}), ...authenticatedErrors },
      },
    },
    async (request) => {
      await closePullRequest(ctx, callerOf(request), request.body);
      return {};
    },
  );
  app.post(
    '/git/reportStatus',
    {
      schema: {
        tags: ['git forge'],
        summary:
          'CI reports a commit status for a SHA (like GitHub’s statuses API); queue runs at that SHA hear of it',
        body: Type.Object({
          repo: RepoRef,
          sha: Type.String({ pattern: '^[0-9a-fA-F]{40}([0-9a-fA-F]{24})?$' }),
          context: Type.String({ minLength: 1, maxLength: 255 }),
          state: Type.Union([
            Type.Literal('pending'),
            Type.Literal('success'),
            Type.Literal('failure'),
            Type.Literal('error'),
          ]),
          url: Type.Optional(Type.String({ maxLength: 2000 })),
        }),
        response: { 200: Type.Object({}), ...authenticatedErrors },
      },
    },
    async (request) => {
      await reportStatus(ctx, callerOf(request), forge, request.body);
      return {};
    },
  );
}
