import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { RunActivities } from '../activities/index.js';

const { pruneRunPayloads } = proxyActivities<RunActivities>({
  startToCloseTimeout: '10m',
  retry: { maximumAttempts: 5, initialInterval: '5s' },
  cancellationType: ActivityCancellationType.TRY_CANCEL,
});

/** Started by the retention schedule: removes stored bodies of runs past retention. */
export async function pruneRunPayloadsWorkflow(retentionSeconds: number): Promise<number> {
  return pruneRunPayloads(retentionSeconds);
}
