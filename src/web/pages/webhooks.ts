import type { FastifyInstance } from 'fastify';
import { createWebhook, deleteWebhook, listWebhooks } from '../../app/webhooks-out/endpoints.ts';
import { AppError } from '../../domain/errors.ts';
import { paths } from '../paths.ts';
import { CSS_HREF, type Form, sendPage, text } from '../respond.ts';
import type { Web } from '../session-plugin.ts';
import { webhooksView } from '../views/webhooks.ts';
import { webhookFromForm } from '../webhooks-form.ts';

/** `/{org}/webhooks`: the organization's outgoing webhooks, adding and deleting them. */
export function registerWebhooks(web: FastifyInstance, w: Web, page: object): void {
  const { ctx } = w;
  web.get(
    '/:org/webhooks',
    page,
    w.orgPage(async (s, request, reply) => {
      const deleted = text((request.query as Form)['updated'], 20) === 'deleted';
      const webhooks = await listWebhooks(ctx, s.caller);
      return sendPage(reply, 200, webhooksView(CSS_HREF, s.viewer, { webhooks, deleted }));
    }),
  );

  // Added through the API's schema and use case; the answer is the page itself, the one place
  // the secret is ever shown (no-store, like every page), not a redirect that would lose it.
  web.post(
    '/:org/webhooks',
    page,
    w.orgPage(async (s, request, reply) => {
      const form = (request.body ?? {}) as Form;
      if (!w.formAllowed(s, request, form)) return w.forbidden(reply, s);
      try {
        const created = await createWebhook(ctx, s.caller, webhookFromForm(form));
        const webhooks = await listWebhooks(ctx, s.caller);
        return sendPage(reply, 200, webhooksView(CSS_HREF, s.viewer, { webhooks, created }));
      } catch (error) {
        if (!(error instanceof AppError && error.status === 400)) throw error;
        const errors = (error.details ?? []).map((d) => d.message);
        const webhooks = await listWebhooks(ctx, s.caller);
        return sendPage(
          reply,
          400,
          webhooksView(CSS_HREF, s.viewer, {
            webhooks,
            form,
            errors: errors.length > 0 ? errors : [error.message],
          }),
        );
      }
    }),
  );

  web.post(
    '/:org/webhooks/:id/delete',
    page,
    w.orgPage(async (s, request, reply) => {
      const form = (request.body ?? {}) as Form;
      if (!w.formAllowed(s, request, form)) return w.forbidden(reply, s);
      const { id } = request.params as { id: string };
      await deleteWebhook(ctx, s.caller, id);
      return reply.redirect(`${paths.webhooks(s.caller.orgSlug)}?updated=deleted`, 303);
    }),
  );
}
