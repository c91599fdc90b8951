import type { LogEntry } from '@temporalio/worker';

/** Every workflow of ours is keyed by its run: `<run_id>` for runs, `webhook-<run_id>[-n]` for deliveries. */
const RUN_ID = /^(?:webhook-)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

/**
 * The SDK's log lines (workflow and activity context included) as one JSON object per line, like
 * ours and the API's, with `run_id` on every line that is about a run.
 */
export function jsonLogLine(entry: LogEntry): string {
  const meta = { ...(entry.meta ?? {}) } as Record<string, unknown>;
  const error = meta.error instanceof Error ? { message: meta.error.message, type: (meta.error as { type?: string }).type, stack: meta.error.stack } : meta.error;
  delete meta.error;
  const workflowId = typeof meta.workflowId === 'string' ? meta.workflowId : undefined;
  const runId = workflowId ? RUN_ID.exec(workflowId)?.[1] : undefined;
  return JSON.stringify({
    level: entry.level.toLowerCase(),
    time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
    msg: entry.message,
    ...(runId ? { run_id: runId } : {}),
    ...meta,
    ...(error !== undefined ? { error } : {}),
  });
}
