import type { Client } from '@temporalio/client';
import type { Config } from '../config/config.js';
import type { App } from '../db/repositories/apps.js';
import type { RunsRepository } from '../db/repositories/runs.js';
import type { WebhooksRepository } from '../db/repositories/webhooks.js';
import { MAX_RUN_MS, SEARCH_ATTRIBUTES, type RunAppInput } from '../workflows/definitions.js';
import type { runAppWorkflow } from '../workflows/run-app.js';

export class RunNotAcceptedError extends Error {}

/** A run request's webhook: the endpoint, and X-Webhook-Secret already sealed with the codec key. */
export interface WebhookRequest {
  endpoint: string;
  secretSealed: Buffer | null;
}

/** Persists the run and its body, then starts its workflow; resolves only once both are durable. */
export async function launchAsyncRun(
  deps: { config: Config; temporal: Client; runs: RunsRepository; webhooks?: WebhooksRepository },
  app: App,
  runId: string,
  body: Buffer,
  webhook: WebhookRequest | null,
): Promise<void> {
  const { config, temporal, runs } = deps;
  if (webhook && !deps.webhooks) throw new Error('launchAsyncRun: a webhook needs the webhooks repository');
  await runs.createQueued({ runId, appId: app.appId, projectId: app.projectId, appName: app.name, async: true, requestBody: body, webhookEndpoint: webhook?.endpoint ?? null });
  // Delivery 0 exists before the run starts, so GET …/webhook answers "pending" from the first moment.
  if (webhook) await deps.webhooks!.createFirstDelivery({ runId, endpoint: webhook.endpoint, secretSealed: webhook.secretSealed });
  const runTimeoutMs = Math.min(app.responseGracePeriod * 1000, config.runMaxSeconds * 1000, MAX_RUN_MS);
  const input: RunAppInput = {
    runId,
    projectId: app.projectId,
    appId: app.appId,
    appName: app.name,
    url: app.url,
    runTimeoutMs,
    heartbeatTimeoutMs: config.appCallHeartbeatMs,
    appCallTaskQueue: config.taskQueues.appCalls,
    // Set only with a webhook: runs without one keep exactly their former input and commands.
    ...(webhook ? { webhook: { endpoint: webhook.endpoint, signed: webhook.secretSealed !== null, taskQueue: config.taskQueues.webhooks } } : {}),
  };
  try {
    await temporal.workflow.start<typeof runAppWorkflow>('runAppWorkflow', {
      workflowId: runId,
      taskQueue: config.taskQueues.runs,
      args: [input],
      // A retried start after a crash finds the same workflow instead of creating a second run.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      // Backstop only: the workflow's own timer ends the run and records it as timed_out.
      workflowExecutionTimeout: runTimeoutMs + 30 * 60 * 1000,
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.projectId, value: app.projectId },
        { key: SEARCH_ATTRIBUTES.appId, value: app.appId },
        { key: SEARCH_ATTRIBUTES.appName, value: app.name },
        { key: SEARCH_ATTRIBUTES.runStatus, value: 'queued' },
        { key: SEARCH_ATTRIBUTES.runAsync, value: true },
      ],
      staticSummary: `Run ${runId} of app ${app.appId}`,
      staticDetails: `Project ${app.projectId}, app ${app.name}, calls ${app.url} (grace ${app.responseGracePeriod}s)`,
    });
  } catch (err) {
    await runs
      .finish({ runId, status: 'failure', statusCode: null, runTimeMs: null, error: `not accepted: ${(err as Error).message}` })
      .catch(() => {});
    throw new RunNotAcceptedError(`run could not be accepted: ${(err as Error).message}`);
  }
}
