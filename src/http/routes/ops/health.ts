import { Type } from 'typebox';
import { AppError } from '../../../domain/errors.ts';
import { ErrorEnvelope } from '../../schemas/common.ts';
import type { Api, RouteDeps } from '../../types.ts';

/** Liveness (the process answers) and readiness (it can reach its database and is not shutting down). */
export function registerHealth(app: Api, deps: RouteDeps): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process is up',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: the database answers and the server is not shutting down',
        response: {
          200: Type.Object({ status: Type.Literal('ready'), database: Type.String() }),
          503: ErrorEnvelope,
        },
      },
    },
    async () => {
      if (!deps.isAccepting()) throw new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down');
      try {
        await deps.database.ping();
      } catch {
        throw new AppError('SERVICE_UNAVAILABLE', `The ${deps.database.engine} database is not reachable`);
      }
      return { status: 'ready' as const, database: deps.database.engine };
    },
  );
}
