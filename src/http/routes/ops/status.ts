import { Type } from 'typebox';
import type { Api, RouteDeps } from '../../types.ts';

const Color = Type.Union([Type.Literal('green'), Type.Literal('yellow'), Type.Literal('red')]);
const ComponentStatus = Type.Object({ name: Type.String(), color: Color, statusDescription: Type.String() });

/** Trunk's GET /v1/status shape (no auth): an overall status and one entry per component. */
const StatusResponse = Type.Object({
  overallStatus: Type.Object({
    type: Type.Union([Type.Literal('up'), Type.Literal('impacted')]),
    color: Color,
    overallStatusDescription: Type.String(),
    impactedStatuses: Type.Optional(Type.Array(ComponentStatus)),
  }),
  statuses: Type.Array(ComponentStatus),
});

export function registerStatus(app: Api, deps: RouteDeps): void {
  app.get(
    '/v1/status',
    {
      schema: {
        tags: ['operations'],
        summary: 'Service status in Trunk’s shape; needs no token',
        response: { 200: StatusResponse },
      },
    },
    async () => {
      const databaseUp = await deps.database.ping().then(
        () => true,
        () => false,
      );
      const statuses = [
        { name: 'API', color: 'green' as const, statusDescription: 'Operational' },
        databaseUp
          ? { name: 'Database', color: 'green' as const, statusDescription: 'Operational' }
          : { name: 'Database', color: 'red' as const, statusDescription: 'Unreachable' },
      ];
      const impacted = statuses.filter((s) => s.color !== 'green');
      if (impacted.length === 0) {
        return {
          overallStatus: {
            type: 'up' as const,
            color: 'green' as const,
            overallStatusDescription: 'All systems operational',
          },
          statuses,
        };
      }
      return {
        overallStatus: {
          type: 'impacted' as const,
          color: 'red' as const,
          overallStatusDescription: 'Impacted',
          impactedStatuses: impacted,
        },
        statuses,
      };
    },
  );
}
