import { Type } from 'typebox';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.ts';
import { OrgUrlSlug } from './common.ts';

/** Schemas of the outgoing-webhook endpoints (Mainline extension, snake_case). */

/** The literals of WEBHOOK_EVENT_TYPES (listed here so TypeBox infers a tuple of them). */
export const WebhookEventType = Type.Union(
  [
    Type.Literal('test.status_changed'),
    Type.Literal('test.quarantined'),
    Type.Literal('pull_request.merged'),
    Type.Literal('pull_request.failed'),
  ],
  { description: `one of ${WEBHOOK_EVENT_TYPES.join(', ')}` },
);

export const WebhookId = Type.String({ format: 'uuid', description: 'the id webhooks/create returned' });

export const Scope = { org_url_slug: Type.Optional(OrgUrlSlug) };

export const CreateWebhookBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: 'absolute http:// or https:// URL the events are POSTed to',
  }),
  events: Type.Array(WebhookEventType, { minItems: 1, maxItems: 20, description: 'event types to receive' }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  ...Scope,
});

const WebhookFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(WebhookEventType),
  description: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
};

export const WebhookRecord = Type.Object({
  ...WebhookFields,
  disabled: Type.Boolean(),
});

export const CreatedWebhook = Type.Object({
  ...WebhookFields,
  secret: Type.String({
    description:
      'whsec_…: the HMAC-SHA256 key of the x-mainline-signature-256 header. Shown only in this response.',
  }),
});

const NullableTime = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const DeliveryRecord = Type.Object({
  id: Type.String({ format: 'uuid', description: 'the x-mainline-delivery header' }),
  event_id: Type.String({ format: 'uuid', description: 'the body’s id' }),
  type: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer({ minimum: 0 }),
  last_status: Type.Union([Type.Integer(), Type.Null()], {
    description: 'HTTP status of the last attempt; null when it got no answer',
  }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  next_attempt_at: NullableTime,
  delivered_at: NullableTime,
  failed_at: NullableTime,
});
