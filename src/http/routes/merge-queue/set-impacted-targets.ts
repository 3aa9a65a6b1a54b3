import { Type } from 'typebox';
import { setImpactedTargets } from '../../../app/queue/prs.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { PR_NUMBER_MAX, QueueRef } from '../../schemas/queue.ts';
import type { Api, RouteDeps } from '../../types.ts';

/** pr.number may be a JSON string of digits: trunk-io/merge-action sends it that way. */
const PrNumber = Type.Union([
  Type.Integer({ minimum: 1, maximum: PR_NUMBER_MAX }),
  // Digits only, below PR_NUMBER_MAX (nine digits: no forge numbers PRs that high).
  Type.String({ pattern: '^[1-9][0-9]{0,8}$' }),
]);

export function registerSetImpactedTargets(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/setImpactedTargets',
    {
      schema: {
        tags: ['merge queue'],
        summary:
          'The build targets a PR head touches (parallel mode); "ALL" (or "IMPACTS_ALL") depends on everything',
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
      await setImpactedTargets(ctx, callerOf(request), { ...request.body, impactedTargets: targets });
      return {};
    },
  );
}
