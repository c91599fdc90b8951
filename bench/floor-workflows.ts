// The shape of an async run with a webhook, with every step emptied of our work: an activity that
// only answers, a local activity that only notes the time (where the real run records its outcome),
// an abandoned child, and the child's local activity that only POSTs. What it takes on a given
// Temporal server and SDK is the floor our delivery latency cannot go under (bench/webhook-floor.ts).
import { ParentClosePolicy, proxyActivities, proxyLocalActivities, startChild } from '@temporalio/workflow';
import type { FloorActivities } from './webhook-floor.js';

const { answer } = proxyActivities<FloorActivities>({ startToCloseTimeout: '30s' });
const { noteFinished, post } = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '30s' });

export async function floorDeliveryWorkflow(id: string, url: string): Promise<void> {
  await post(id, url);
}

export async function floorRunWorkflow(id: string, url: string, deliveryTaskQueue: string): Promise<void> {
  await answer(id);
  await noteFinished(id);
  await startChild(floorDeliveryWorkflow, {
    workflowId: `${id}-delivery`,
    args: [id, url],
    taskQueue: deliveryTaskQueue,
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
}
