import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { AppError } from '../domain/errors.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/webhooks.ts';
import { CreateWebhookBody } from '../http/schemas/webhooks.ts';
import { findNul, nulError, type SchemaIssue, toDetails } from '../http/validation.ts';

const { org_url_slug: _scope, ...fields } = CreateWebhookBody.properties;
const check = Compile(Type.Object(fields));

/** The webhooks/create body a posted form asks for, checked by the API's schema with its messages (400). */
export function webhookFromForm(form: Record<string, string | undefined>): {
  url: string;
  events: WebhookEventType[];
  description?: string;
} {
  const description = (form['description'] ?? '').trim();
  const body = {
    url: (form['url'] ?? '').trim(),
    events: WEBHOOK_EVENT_TYPES.filter((t) => form[`event.${t}`] === 'on'),
    ...(description === '' ? {} : { description }),
  };
  const nul = findNul(body);
  if (nul !== undefined) throw nulError(nul);
  if (check.Check(body)) return body;
  const details = toDetails([...check.Errors(body)] as unknown as SchemaIssue[], 'body');
  throw new AppError('VALIDATION_FAILED', `Invalid request: ${details.map((d) => d.message).join('; ')}`, {
    details,
  });
}
