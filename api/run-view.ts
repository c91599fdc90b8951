import type { RunRecord } from '../db/repositories/runs.js';
import type { RunViewT } from './schemas/runs.js';

export type WebhookSummaryLookup = (runIds: string[]) => Promise<Map<string, { state: 'pending' | 'delivered' | 'failed'; attempts: number }>>;

export function toRunView(r: RunRecord, webhook: RunViewT['webhook'] = null): RunViewT {
  return {
    run_id: r.runId,
    app_id: r.appId,
    async: r.async,
    status: r.status,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    finished_at: r.finishedAt?.toISOString() ?? null,
    run_time_ms: r.runTimeMs,
    status_code: r.statusCode,
    error: r.error,
    webhook,
  };
}

/** Opaque keyset cursor: the (created_at, run_id) of the last run on a page. */
export function encodeCursor(r: RunRecord): string {
  return Buffer.from(`${r.createdAt.toISOString()}|${r.runId}`).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: Date; runId: string } | null {
  const [ts, runId] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(ts);
  if (!runId || Number.isNaN(createdAt.getTime())) return null;
  return { createdAt, runId };
}
