import { Type, type Static } from '@sinclair/typebox';

const DeliveryState = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const WebhookAttemptView = Type.Object({
  attempt: Type.Integer({ description: 'Attempt number within the delivery, from 1.' }),
  started_at: Type.String({ format: 'date-time' }),
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status, when it answered." }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Network error, timeout or the non-2xx status.' }),
  outcome: Type.Union([Type.Literal('delivered'), Type.Literal('retry'), Type.Literal('rejected')], {
    description: 'delivered (2xx); retry (network error, timeout, 404, 1xx, 3xx); rejected (other 4xx, 5xx: not retried).',
  }),
});

export const WebhookDeliveryView = Type.Object({
  delivery: Type.Integer({ description: '0 is the delivery the run request asked for; 1, 2, … are redeliveries.' }),
  workflow_id: Type.String(),
  state: DeliveryState,
  created_at: Type.String({ format: 'date-time' }),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  error: NullableString,
  attempts: Type.Array(WebhookAttemptView),
});

export const WebhookLog = Type.Object(
  {
    run_id: Type.String(),
    endpoint: Type.String(),
    signed: Type.Boolean({ description: 'Deliveries carry the signature headers (X-Webhook-Secret was sent).' }),
    state: DeliveryState,
    deliveries: Type.Array(WebhookDeliveryView),
  },
  { $id: 'WebhookLog', title: 'WebhookLog', description: "A run's webhook deliveries; state is that of the latest delivery." },
);
export type WebhookLogT = Static<typeof WebhookLog>;

export const RedeliveryAccepted = Type.Object({
  run_id: Type.String(),
  delivery: Type.Integer(),
  workflow_id: Type.String(),
  state: Type.Literal('pending'),
});
