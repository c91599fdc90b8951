import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../config/config.js';
import type { pruneRunPayloadsWorkflow } from '../workflows/prune-run-payloads.js';

export function retentionScheduleId(config: Config): string {
  return `${config.taskQueues.runs}-prune-run-payloads`;
}

/** Creates, or brings up to date, the Temporal schedule that enforces result retention. */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<string> {
  const scheduleId = retentionScheduleId(config);
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'pruneRunPayloadsWorkflow',
    args: [config.resultRetentionSeconds] as Parameters<typeof pruneRunPayloadsWorkflow>,
    taskQueue: config.taskQueues.runs,
    workflowId: `${scheduleId}-run`,
  };
  const spec = { intervals: [{ every: config.resultPruneIntervalSeconds * 1000 }] };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
      memo: { purpose: 'deletes run bodies older than RESULT_RETENTION_SECONDS' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    // Several workers start at once; each makes the schedule match its configuration.
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action }));
  }
  return scheduleId;
}
