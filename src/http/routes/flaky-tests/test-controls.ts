import { Type } from 'typebox';
import { flagTest, overrideQuarantine, testHistory } from '../../../app/health/manage.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { HistoryEvent, TestResponse, TestScoped } from '../../schemas/flaky-manage.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Reason = Type.Optional(Type.String({ maxLength: 256 }));

/** Mainline extensions: per-test quarantine override, flag as flaky, and the test's history. */
export function registerTestControls(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/flaky-tests/set-quarantine-override',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'Always / never quarantine a test, or back to automatic (Mainline extension)',
        body: Type.Object({
          ...TestScoped,
          setting: Type.Union([
            Type.Literal('ALWAYS_QUARANTINE'),
            Type.Literal('NEVER_QUARANTINE'),
            Type.Literal('AUTO'),
          ]),
          reason: Reason,
        }),
        response: { 200: TestResponse, ...authenticatedErrors },
      },
    },
    async (request) => overrideQuarantine(ctx, callerOf(request), request.body),
  );
  app.post(
    '/flaky-tests/flag-test',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'Flag a test as flaky by hand (forces FLAKY), or remove the flag (Mainline extension)',
        body: Type.Object({ ...TestScoped, flagged: Type.Boolean(), reason: Reason }),
        response: { 200: TestResponse, ...authenticatedErrors },
      },
    },
    async (request) => flagTest(ctx, callerOf(request), request.body),
  );
  app.post(
    '/flaky-tests/get-test-history',
    {
      schema: {
        tags: ['flaky tests'],
        summary:
          'Status transitions, quarantine changes, overrides, flags and tickets of a test, newest first (Mainline extension)',
        body: Type.Object(TestScoped),
        response: { 200: Type.Object({ events: Type.Array(HistoryEvent) }), ...authenticatedErrors },
      },
    },
    async (request) => testHistory(ctx, callerOf(request), request.body),
  );
}
