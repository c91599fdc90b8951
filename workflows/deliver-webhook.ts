import { ActivityFailure, CancellationScope, proxyLocalActivities } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/deliver-webhook.js';
import {
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_MAX_RETRY_DELAY_MS,
  WEBHOOK_REJECTED,
  WEBHOOK_UNDELIVERABLE,
  type DeliverWebhookInput,
  type DeliverWebhookResult,
} from './definitions.js';

// The retry table of the interface, section 6: at most 3 attempts, 1 s then 2 s apart (never over
// 5 s); the activity throws non-retryable failures for other 4xx, 5xx and unusable destinations,
// and counts attempts in the delivery log, so the cap also holds across worker crashes.
//
// Local activities: the attempt runs in the worker that holds the workflow task, so a delivery is
// one workflow task and no activity-task round trips through the server. That is what keeps the
// latency from a run's end to the receiver low under load (bench: npm run bench webhooks). Every
// attempt is still in the delivery log (GET …/webhook) and the retries never leave this worker.
const { deliverWebhook } = proxyLocalActivities<WebhookActivities>({
  // One attempt: the activity's own HTTP timeout (at most 60 s) plus reading the body from PostgreSQL.
  startToCloseTimeout: '90s',
  retry: {
    maximumAttempts: WEBHOOK_MAX_ATTEMPTS,
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: WEBHOOK_MAX_RETRY_DELAY_MS,
    nonRetryableErrorTypes: [WEBHOOK_REJECTED, WEBHOOK_UNDELIVERABLE],
  },
});

// Bookkeeping must survive a PostgreSQL outage, so it retries without a limit (capped backoff).
const { recordWebhookState } = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
});

function failureMessage(err: unknown): string {
  if (err instanceof ActivityFailure) return err.cause?.message ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * One delivery of a finished run's webhook (delivery 0, or a redelivery). The body and the sealed
 * secret are read from PostgreSQL by the activity, so neither passes through history.
 */
export async function deliverWebhookWorkflow(input: DeliverWebhookInput): Promise<DeliverWebhookResult> {
  try {
    const { statusCode, attempt } = await deliverWebhook(input);
    return { state: 'delivered', statusCode, attempts: attempt, error: null };
  } catch (err) {
    const message = failureMessage(err);
    // Usually already recorded by the last attempt; this covers an attempt that itself timed out.
    const attempts = await CancellationScope.nonCancellable(() => recordWebhookState({ ...input, state: 'failed', error: message }));
    // Completed with state "failed" rather than failed: a receiver's refusal is an outcome, not a
    // fault of ours, and the activity has already logged it once with the run id.
    return { state: 'failed', statusCode: null, attempts, error: message };
  }
}
