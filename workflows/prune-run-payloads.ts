import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { RunActivities } from '../activities/index.js';

const { pruneRunPayloads, failOrphanedRuns } = proxyActivities<RunActivities>({
  startToCloseTimeout: '10m',
  retry: { maximumAttempts: 5, initialInterval: '5s' },
  cancellationType: ActivityCancellationType.TRY_CANCEL,
});

// Longer than any start can take: a queued row this old without a workflow was never accepted.
const ORPHAN_AFTER_SECONDS = 600;

/** Started by the retention schedule: removes stored bodies past retention, closes orphaned rows. */
export async function pruneRunPayloadsWorkflow(retentionSeconds: number): Promise<{ pruned: number; orphansClosed: number }> {
  const pruned = await pruneRunPayloads(retentionSeconds);
  const orphansClosed = await failOrphanedRuns(ORPHAN_AFTER_SECONDS);
  return { pruned, orphansClosed };
}
