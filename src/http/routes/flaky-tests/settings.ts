import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { getSettingsJson, updateSettings } from '../../../app/health/manage.ts';
import { callerOf } from '../../plugins/auth.ts';
import { authenticatedErrors } from '../../schemas/common.ts';
import { Scoped, SettingsPatch, SettingsRecord } from '../../schemas/flaky-manage.ts';
import type { Api, RouteDeps } from '../../types.ts';

const Response = Type.Object({ settings: SettingsRecord });

/** Mainline extension: read and change a repository's quarantine switches and detection monitors. */
export function registerSettings(app: Api, { ctx }: RouteDeps): void {
  app.post(
    '/flaky-tests/get-repository-settings',
    {
      schema: {
        tags: ['flaky tests'],
        summary: 'Quarantine switches and detection monitors of a repository (Mainline extension)',
        body: Type.Object(Scoped),
        response: { 200: Response, ...authenticatedErrors },
      },
    },
    async (request, reply) => {
      const bytes = await getSettingsJson(ctx, callerOf(request), request.body, (answer) => {
        return reply.serialize(answer) as string;
      });
      // Bytes are sent as they are (Fastify serializes objects only), past the typed reply's check.
      const sent: FastifyReply = reply;
      return sent.type('application/json; charset=utf-8').send(bytes);
    },
  );
  app.post(
    '/flaky-tests/update-repository-settings',
    {
      schema: {
        tags: ['flaky tests'],
        summary:
          'Change quarantine switches and monitors; a monitor list given replaces the list (Mainline extension)',
        body: Type.Object({ ...Scoped, settings: SettingsPatch }),
        response: { 200: Response, ...authenticatedErrors },
      },
    },
    async (request) => updateSettings(ctx, callerOf(request), request.body),
  );
}
