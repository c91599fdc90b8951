import type { Client } from '@temporalio/client';
import type { Config } from '../config/config.js';
import type { App } from '../db/repositories/apps.js';
import type { RunsRepository } from '../db/repositories/runs.js';
import { MAX_RUN_MS, SEARCH_ATTRIBUTES, type RunAppInput } from '../workflows/definitions.js';
import type { runAppWorkflow } from '../workflows/run-app.js';

export class RunNotAcceptedError extends Error {}

/** Persists the run and its body, then starts its workflow; resolves only once both are durable. */
export async function launchAsyncRun(deps: { config: Config; temporal: Client; runs: RunsRepository }, app: App, runId: string, body: Buffer, webhookEndpoint: string | null): Promise<void> {
  const { config, temporal, runs } = deps;
  await runs.createQueued({ runId, appId: app.appId, projectId: app.projectId, appName: app.name, async: true, requestBody: body, webhookEndpoint });
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
