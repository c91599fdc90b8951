import { isIP } from 'node:net';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { request, type Dispatcher } from 'undici';
import type { AttemptOutcome, WebhooksRepository } from '../db/repositories/webhooks.js';
import { buildWebhookBody } from '../lib/webhook-body.js';
import { DESTINATION_REFUSED, isNonPublicAddress } from '../lib/webhook-destination.js';
import { openWebhookSecret, SecretUnavailableError } from '../lib/webhook-secret-box.js';
import { REQUEST_ID_HEADER, signatureHeaders } from '../lib/webhook-signature.js';
import {
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_MAX_RETRY_DELAY_MS,
  WEBHOOK_REJECTED,
  WEBHOOK_UNDELIVERABLE,
  type DeliverWebhookInput,
} from '../workflows/definitions.js';

export interface DeliverWebhookDeps {
  webhooks: WebhooksRepository;
  dispatcher: Dispatcher;
  codecKey: string;
  attemptTimeoutMs: number;
  allowPrivateDestinations: boolean;
  /** Where "all attempts failed" goes; a JSON line on stderr by default. */
  logFailure?: (entry: Record<string, unknown>) => void;
}

/** How one attempt's outcome maps onto the retry table (section 6 of the interface). */
export function classifyStatus(statusCode: number): AttemptOutcome {
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode === 404) return 'retry';
  if (statusCode >= 400 && statusCode < 600) return 'rejected';
  return 'retry'; // 1xx, 3xx (redirects are not followed) and anything else outside 2xx/4xx/5xx
}

function retryAfterMs(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const seconds = Number(v);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(v) - Date.now();
  return Number.isFinite(ms) && ms >= 0 ? Math.min(ms, WEBHOOK_MAX_RETRY_DELAY_MS) : undefined;
}

function describeError(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no answer within ${timeoutMs} ms`;
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  const code = e.code ?? e.cause?.code;
  const message = e.cause?.message ?? e.message;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** A receiver's answer or the network is an expected outcome, not a worker problem: logged at debug, no failure metrics. */
function receiverFailure(message: string, type: string, nonRetryable: boolean, extra: { details?: unknown[]; nextRetryDelay?: number } = {}) {
  return ApplicationFailure.create({ message, type, nonRetryable, category: ApplicationFailureCategory.BENIGN, ...extra });
}

export function makeDeliverWebhookActivities(deps: DeliverWebhookDeps) {
  const logFailure = deps.logFailure ?? ((entry) => console.error(JSON.stringify(entry)));

  async function record(input: DeliverWebhookInput, attempt: number, startedAt: Date, statusCode: number | null, error: string | null, outcome: AttemptOutcome) {
    const durationMs = Date.now() - startedAt.getTime();
    // The log must not decide the delivery: a failed write is retried briefly, then left out.
    for (let i = 0; i < 3; i++) {
      try {
        await deps.webhooks.recordAttempt({ runId: input.runId, delivery: input.delivery, attempt, startedAt, durationMs, statusCode, error, outcome });
        return;
      } catch (err) {
        if (i === 2) Context.current().log.warn('webhook attempt not recorded', { run_id: input.runId, error: (err as Error).message });
        else await new Promise((r) => setTimeout(r, 100 * (i + 1)));
      }
    }
  }

  /**
   * The delivery's final state, recorded once (the first call wins); "all attempts failed" is
   * logged with the run id and counted. Returns the attempts made.
   */
  async function finishDelivery(input: DeliverWebhookInput, state: 'delivered' | 'failed', error: string | null): Promise<number> {
    const first = await deps.webhooks.finish(input.runId, input.delivery, state, error);
    const delivery = (await deps.webhooks.deliveriesOf(input.runId)).find((d) => d.delivery === input.delivery);
    const attempts = delivery?.attempts.length ?? 0;
    if (!first) return attempts;
    Context.current()
      .metricMeter.createCounter('runhook_webhook_deliveries', '', 'Webhook deliveries finished, by outcome (delivered or failed)')
      .add(1, { outcome: state });
    if (state === 'failed') {
      logFailure({
        level: 'warn',
        msg: 'webhook delivery failed',
        run_id: input.runId,
        delivery: input.delivery,
        attempts,
        // The origin only: paths and query strings of endpoints can carry tokens.
        destination: delivery ? new URL(delivery.endpoint).origin : null,
        error,
      });
    }
    return attempts;
  }

  /** A failure that ends the delivery: recorded as failed first, so the workflow has nothing left to do. */
  async function giveUp(input: DeliverWebhookInput, message: string, type: string, details?: unknown[]): Promise<never> {
    await finishDelivery(input, 'failed', message);
    throw receiverFailure(message, type, true, details ? { details } : {});
  }

  return {
    /**
     * One attempt: build the body from PostgreSQL, sign it, POST it, record it, and throw per the
     * retry table. The attempt number comes from the delivery log, not the activity's own counter,
     * so the cap of 3 holds even when a worker dies mid-delivery and another one picks it up. The
     * final state is recorded here too, so a delivery costs one workflow task in the common case.
     */
    async deliverWebhook(input: DeliverWebhookInput): Promise<{ statusCode: number | null; attempt: number }> {
      const ctx = Context.current();
      const found = await deps.webhooks.forAttempt(input.runId, input.delivery);
      if (!found) throw ApplicationFailure.nonRetryable(`no webhook delivery ${input.delivery} recorded for run ${input.runId}`, WEBHOOK_UNDELIVERABLE);
      const { delivery, run, attemptsMade } = found;
      // Already finished (a retried task after a crash that followed the answer): never POST again.
      if (delivery.state === 'delivered') return { statusCode: null, attempt: attemptsMade };
      if (delivery.state === 'failed') throw receiverFailure(delivery.error ?? 'webhook delivery failed', WEBHOOK_UNDELIVERABLE, true);
      const attempt = attemptsMade + 1;
      if (attempt > WEBHOOK_MAX_ATTEMPTS) return giveUp(input, delivery.error ?? `no answer after ${WEBHOOK_MAX_ATTEMPTS} attempts`, WEBHOOK_UNDELIVERABLE);
      const last = attempt === WEBHOOK_MAX_ATTEMPTS;
      // A late answer stored after a timeout is not the run's response (the run has no status code then).
      const body = buildWebhookBody(run, run.statusCode !== null ? found.response : null);
      const startedAt = new Date();

      let secret: string | null = null;
      if (delivery.secretSealed) {
        try {
          secret = openWebhookSecret(deps.codecKey, input.runId, delivery.secretSealed);
        } catch (err) {
          if (!(err instanceof SecretUnavailableError)) throw err;
          await record(input, attempt, startedAt, null, err.message, 'rejected');
          return giveUp(input, err.message, WEBHOOK_UNDELIVERABLE);
        }
      }
      const url = new URL(delivery.endpoint);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // Names are checked inside the connection's DNS lookup; literal addresses never reach it.
      if (!deps.allowPrivateDestinations && isIP(host) && isNonPublicAddress(host)) {
        const message = `webhook destination ${host} is not a public address`;
        await record(input, attempt, startedAt, null, message, 'rejected');
        return giveUp(input, message, WEBHOOK_UNDELIVERABLE);
      }

      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'runhook-webhooks/1',
        [REQUEST_ID_HEADER]: input.runId,
        ...(secret !== null ? signatureHeaders(secret, input.runId, body) : {}),
      };
      const timeout = AbortSignal.timeout(deps.attemptTimeoutMs);
      let statusCode: number;
      let retryAfter: number | undefined;
      try {
        const res = await request(url, {
          method: 'POST',
          headers,
          body,
          dispatcher: deps.dispatcher,
          signal: AbortSignal.any([timeout, ctx.cancellationSignal]),
        });
        statusCode = res.statusCode;
        retryAfter = retryAfterMs(res.headers['retry-after']);
        await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
      } catch (err) {
        const refused = (err as { code?: string }).code === DESTINATION_REFUSED || (err as { cause?: { code?: string } }).cause?.code === DESTINATION_REFUSED;
        const message = describeError(err, timeout.aborted, deps.attemptTimeoutMs);
        await record(input, attempt, startedAt, null, message, refused ? 'rejected' : 'retry');
        if (refused || last) return giveUp(input, message, WEBHOOK_UNDELIVERABLE);
        if (ctx.cancellationSignal.aborted) throw err;
        // A network error or timeout: retried, like the table says.
        throw receiverFailure(message, 'WebhookNetworkError', false);
      }

      const outcome = classifyStatus(statusCode);
      await record(input, attempt, startedAt, statusCode, outcome === 'delivered' ? null : `HTTP ${statusCode}`, outcome);
      if (outcome === 'delivered') {
        await finishDelivery(input, 'delivered', null);
        return { statusCode, attempt };
      }
      const message = `receiver answered HTTP ${statusCode}`;
      if (outcome === 'rejected') return giveUp(input, message, WEBHOOK_REJECTED, [{ statusCode }]);
      if (last) return giveUp(input, message, WEBHOOK_UNDELIVERABLE, [{ statusCode }]);
      throw receiverFailure(message, 'WebhookRetryableStatus', false, { details: [{ statusCode }], nextRetryDelay: retryAfter });
    },

    /** Records the final state if the attempts did not (the activity itself failed or timed out); returns the attempts made. */
    async recordWebhookState(input: DeliverWebhookInput & { state: 'delivered' | 'failed'; error: string | null }): Promise<number> {
      return finishDelivery(input, input.state, input.error);
    },
  };
}

export type WebhookActivities = ReturnType<typeof makeDeliverWebhookActivities>;
