import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Config } from '../config/config.js';
import { webhookWorkflowId } from '../workflows/definitions.js';
import type { deliverWebhookWorkflow } from '../workflows/deliver-webhook.js';

/**
 * Starts one delivery workflow. Idempotent: a running one is reused, and a closed one is never
 * started again (that would deliver twice), so a re-driven start is always safe.
 */
export async function startDeliveryWorkflow(temporal: Client, config: Config, runId: string, delivery: number): Promise<void> {
  try {
    await temporal.workflow.start<typeof deliverWebhookWorkflow>('deliverWebhookWorkflow', {
      workflowId: webhookWorkflowId(runId, delivery),
      taskQueue: config.taskQueues.webhooks,
      args: [{ runId, delivery }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowExecutionTimeout: '30m',
      staticSummary: `Webhook delivery ${delivery} of run ${runId}`,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
