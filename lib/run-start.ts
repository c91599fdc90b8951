import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../config/config.js';
import type { App } from '../db/repositories/apps.js';
import { MAX_RUN_MS, SEARCH_ATTRIBUTES, type RunAppInput } from '../workflows/definitions.js';
import type { runAppWorkflow } from '../workflows/run-app.js';

/** Everything starting a run's workflow needs, stored with the run (JSON, no secrets). */
export interface RunStartSpec {
  input: RunAppInput;
  taskQueue: string;
  executionTimeoutMs: number;
  summary: string;
  details: string;
}

/** The start of an async run, fixed at accept time (the app's settings then, not at a later re-drive). */
export function buildRunStart(config: Config, app: App, runId: string, webhook: { endpoint: string; signed: boolean } | null): RunStartSpec {
  const runTimeoutMs = Math.min(app.responseGracePeriod * 1000, config.runMaxSeconds * 1000, MAX_RUN_MS);
  return {
    input: {
      runId,
      projectId: app.projectId,
      appId: app.appId,
      appName: app.name,
      url: app.url,
      runTimeoutMs,
      heartbeatTimeoutMs: config.appCallHeartbeatMs,
      appCallTaskQueue: config.taskQueues.appCalls,
      // Set only with a webhook: runs without one keep exactly their former input and commands.
      ...(webhook ? { webhook: { endpoint: webhook.endpoint, signed: webhook.signed, taskQueue: config.taskQueues.webhooks } } : {}),
    },
    taskQueue: config.taskQueues.runs,
    // Backstop only: the workflow's own timer ends the run and records it as timed_out.
    executionTimeoutMs: runTimeoutMs + 30 * 60 * 1000,
    summary: `Run ${runId} of app ${app.appId}`,
    details: `Project ${app.projectId}, app ${app.name}, calls ${app.url} (grace ${app.responseGracePeriod}s)`,
  };
}

/**
 * Starts the run's workflow (id = run_id). Idempotent: a workflow that already exists, running or
 * closed, is kept and never started twice, so re-driving a start is always safe.
 */
export async function startRunWorkflow(temporal: Client, spec: RunStartSpec): Promise<void> {
  const { input } = spec;
  try {
    await temporal.workflow.start<typeof runAppWorkflow>('runAppWorkflow', {
      workflowId: input.runId,
      taskQueue: spec.taskQueue,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowExecutionTimeout: spec.executionTimeoutMs,
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.projectId, value: input.projectId },
        { key: SEARCH_ATTRIBUTES.appId, value: input.appId },
        { key: SEARCH_ATTRIBUTES.appName, value: input.appName },
        { key: SEARCH_ATTRIBUTES.runStatus, value: 'queued' },
        { key: SEARCH_ATTRIBUTES.runAsync, value: true },
      ],
      staticSummary: spec.summary,
      staticDetails: spec.details,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
