import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { CancellationScope, ChildWorkflowCancellationType, ParentClosePolicy, startChild } from '@temporalio/workflow';
import { deliverWebhookWorkflow } from './deliver-webhook.js';
import { webhookWorkflowId, type RunWebhook } from './definitions.js';

/**
 * Starts delivery 0 of a finished async run as an abandoned child: it outlives the run, a cancelled
 * run still reports its cancellation, and a delivery that already exists (replayed start) is kept.
 */
export async function startWebhookDelivery(runId: string, webhook: RunWebhook): Promise<void> {
  try {
    // The run may have been cancelled: the start must still happen, so it ignores that cancellation.
    await CancellationScope.nonCancellable(() =>
      startChild(deliverWebhookWorkflow, {
        workflowId: webhookWorkflowId(runId, 0),
        args: [{ runId, delivery: 0 }],
        taskQueue: webhook.taskQueue,
        parentClosePolicy: ParentClosePolicy.ABANDON,
        cancellationType: ChildWorkflowCancellationType.ABANDON,
        workflowExecutionTimeout: '30m',
        staticSummary: `Webhook delivery 0 of run ${runId}`,
      }),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
