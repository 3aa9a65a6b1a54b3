import { Type } from 'typebox';
import { forkRunCaller } from '../../../app/github/fork-runs.ts';
import { setImpactedTargets } from '../../../app/queue/prs.ts';
import { forkRunCallerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { PR_NUMBER_MAX, QueueRef } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

/** pr.number may be a JSON string of digits: trunk-io/merge-action sends it that way. */
const PrNumber = Type.Union([
  Type.Integer({ minimum: 1, maximum: PR_NUMBER_MAX }),
  // Digits only, below PR_NUMBER_MAX (nine digits: no forge numbers PRs that high).
  Type.String({ pattern: '^[1-9][0-9]{0,8}$' }),
]);

export function registerSetImpactedTargets(app: Api, { ctx, forge }: RouteDeps): void {
  app.post(
    '/setImpactedTargets',
    {
      // A fork PR's run (no secrets, so no token) may send x-forked-workflow-run-id instead: verified
      // through GitHub for this one call (app/github/fork-runs.ts; docs/security.md).
      config: { forkRunAuth: true },
      schema: {
        tags: ['merge queue'],
        summary:
          'The build targets a PR head touches (parallel mode); "ALL" (or "IMPACTS_ALL") depends on everything',
        description:
          "From a fork pull request's GitHub Actions run, which has no secrets, send `x-forked-workflow-run-id: <github.run_id>` instead of `x-api-token`: the call is accepted once GitHub confirms that the run is a fork's pull_request run of this repository, in progress, started within 6 hours, at `pr.sha`, the PR's current head (401 saying what did not hold otherwise). No other endpoint accepts it.",
        body: Type.Object({
          ...QueueRef,
          pr: Type.Object({ number: PrNumber, sha: Type.String({ minLength: 1, maxLength: 64 }) }),
          impactedTargets: Type.Union([
            Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100_000 }),
            Type.Literal('ALL'),
            // trunk-io/nx-action (and Trunk's older Merge API spec) say "everything" this way.
            Type.Literal('IMPACTS_ALL'),
          ]),
        }),
        response: { 200: Type.Object({}), ...authenticatedErrors },
      },
    },
    async (request) => {
      const { impactedTargets } = request.body;
      // "IMPACTS_ALL" is a wire synonym of "ALL": the use case knows only "ALL".
      const targets = impactedTargets === 'IMPACTS_ALL' ? 'ALL' : impactedTargets;
      const caller = await forkRunCallerOf(request, async (runId) => {
        const verified = await forkRunCaller(ctx, forge, runId, request.body, request.log);
        request.log.info(
          { runId, repo: request.body.repo, pr: request.body.pr },
          'setImpactedTargets accepted for a verified fork workflow run',
        );
        return verified;
      });
      await setImpactedTargets(ctx, caller, { ...request.body, impactedTargets: targets });
      return {};
    },
  );
}
