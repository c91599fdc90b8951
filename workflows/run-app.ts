import {
  ActivityCancellationType,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { RunActivities } from '../activities/index.js';
import {
  APP_UNREACHABLE,
  MAX_RUN_MS,
  SEARCH_ATTRIBUTES,
  type AppCallOutcome,
  type RunAppInput,
  type RunAppResult,
  type RunStatus,
} from './definitions.js';
import { startWebhookDelivery } from './start-webhook-delivery.js';

// Bookkeeping must survive a PostgreSQL outage, so it retries without a limit (capped backoff).
const bookkeepingOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
  cancellationType: ActivityCancellationType.TRY_CANCEL,
} as const;
const remoteBookkeeping = proxyActivities<RunActivities>(bookkeepingOptions);
// As local activities the two writes run inside the workflow task that needs them: a run costs three
// workflow tasks and one activity task instead of five and three, which is most of what bounds async
// throughput and a finished run's delay to its webhook on a small machine (npm run bench).
const localBookkeeping = proxyLocalActivities<RunActivities>(bookkeepingOptions);

/** Runs started before local bookkeeping keep replaying their remote activities (recorded histories). */
const LOCAL_BOOKKEEPING_PATCH = 'local-bookkeeping';

function setStatus(status: RunStatus): void {
  upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.runStatus, value: status }]);
}

/** One async run: call the app once, bounded by the grace period and the 12 h cap, record the outcome. */
export async function runAppWorkflow(input: RunAppInput): Promise<RunAppResult> {
  const boundMs = Math.min(input.runTimeoutMs, MAX_RUN_MS);
  const { callAppActivity } = proxyActivities<RunActivities>({
    taskQueue: input.appCallTaskQueue,
    // The workflow's own timer ends the run; this server-side bound is only a backstop.
    startToCloseTimeout: boundMs + 60_000,
    heartbeatTimeout: input.heartbeatTimeoutMs,
    // An HTTP answer of any status is returned, never thrown; what is retried is a lost worker
    // (heartbeat timeout), and the app sees the same X-Request-Id again.
    retry: { maximumAttempts: 3, initialInterval: '1s', nonRetryableErrorTypes: [APP_UNREACHABLE, 'PayloadsTooLarge'] },
    // Return at once on timeout or cancel; the activity still aborts its HTTP call when told.
    cancellationType: ActivityCancellationType.TRY_CANCEL,
  });

  const { recordRunStarted, recordRunOutcome } = patched(LOCAL_BOOKKEEPING_PATCH) ? localBookkeeping : remoteBookkeeping;
  await recordRunStarted(input.runId);
  setStatus('running');

  let status: RunStatus;
  let cancelled: unknown;
  let outcome: AppCallOutcome = { statusCode: null, runTimeMs: 0 };
  try {
    outcome = await CancellationScope.withTimeout(boundMs, () => callAppActivity({ runId: input.runId, url: input.url }));
    status = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300 ? 'succeeded' : 'failure';
  } catch (err) {
    if (isCancellation(err)) {
      status = CancellationScope.current().consideredCancelled ? 'cancelled' : 'timed_out';
      if (status === 'cancelled') cancelled = err;
      outcome = { statusCode: null, runTimeMs: 0, error: status === 'timed_out' ? `run exceeded ${boundMs} ms` : 'run cancelled' };
    } else {
      status = 'failure';
      outcome = { statusCode: null, runTimeMs: 0, error: err instanceof Error ? (err.cause as Error)?.message ?? err.message : String(err) };
    }
  }

  await CancellationScope.nonCancellable(() =>
    recordRunOutcome({ runId: input.runId, status, statusCode: outcome.statusCode, runTimeMs: outcome.runTimeMs, error: outcome.error ?? null }),
  );
  setStatus(status);
  // Only runs that asked for a webhook add this command, so histories of all other runs replay as before.
  if (input.webhook) await startWebhookDelivery(input.runId, input.webhook);
  // Rethrowing the cancellation closes the workflow as Cancelled in the Web UI, after the outcome is safe.
  if (cancelled) throw cancelled;
  return { runId: input.runId, status, statusCode: outcome.statusCode, runTimeMs: outcome.runTimeMs };
}
