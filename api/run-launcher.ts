import type { Client } from '@temporalio/client';
import type { Config } from '../config/config.js';
import type { App } from '../db/repositories/apps.js';
import type { RunsRepository } from '../db/repositories/runs.js';
import { buildRunStart, startRunWorkflow, type RunStartSpec } from '../lib/run-start.js';

/** A run request's webhook: the endpoint, and X-Webhook-Secret already sealed with the codec key. */
export interface WebhookRequest {
  endpoint: string;
  secretSealed: Buffer | null;
}

/**
 * Accepts an async run durably: its row, request body, start spec and webhook delivery 0 commit in
 * one transaction. From then on the run will be started (now, or by a re-drive), so the caller can
 * have its 202 without waiting for Temporal.
 */
export async function acceptAsyncRun(
  deps: { config: Config; runs: RunsRepository },
  app: App,
  runId: string,
  body: Buffer,
  webhook: WebhookRequest | null,
): Promise<RunStartSpec> {
  const spec = buildRunStart(deps.config, app, runId, webhook ? { endpoint: webhook.endpoint, signed: webhook.secretSealed !== null } : null);
  await deps.runs.createAccepted(
    { runId, appId: app.appId, projectId: app.projectId, appName: app.name, async: true, requestBody: body, webhookEndpoint: webhook?.endpoint ?? null },
    spec,
    // Delivery 0 exists before the run starts, so GET …/webhook answers "pending" from the first moment.
    webhook,
  );
  return spec;
}

/** Accepts and starts at once, waiting for both (scripts that need the workflow to exist on return). */
export async function launchAsyncRun(
  deps: { config: Config; temporal: Client; runs: RunsRepository },
  app: App,
  runId: string,
  body: Buffer,
  webhook: WebhookRequest | null,
): Promise<void> {
  const spec = await acceptAsyncRun(deps, app, runId, body, webhook);
  await startRunWorkflow(deps.temporal, spec);
  await deps.runs.markWorkflowsStarted([runId]);
}
