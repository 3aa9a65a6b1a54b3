import { Type } from 'typebox';
import { linkTicket } from '../../../app/health/manage.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { LinkTicketBody } from '../../schemas/flaky.ts';
import type { Api, RouteDeps } from '../../types.ts';

export function registerLinkTicket(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/flaky-tests/link-ticket-to-test-case',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'Link an external ticket (e.g. KAN-123, or a URL) to a test case',
        body: LinkTicketBody,
        response: { 200: Type.Object({}), ...authenticatedErrors },
      },
    },
    async (request) => {
      await linkTicket(ctx, callerOf(request), request.body);
      return {};
    },
  );
}
