import type { Pool } from 'pg';
import type { RunStatus } from '../../workflows/definitions.js';

export interface RunRecord {
  runId: string;
  appId: string;
  projectId: string;
  appName: string;
  async: boolean;
  status: RunStatus;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  runTimeMs: number | null;
  statusCode: number | null;
  error: string | null;
  webhookEndpoint: string | null;
}

function toRun(r: Record<string, any>): RunRecord {
  return {
    runId: r.run_id,
    appId: r.app_id,
    projectId: r.project_id,
    appName: r.app_name,
    async: r.async,
    status: r.status,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    runTimeMs: r.run_time_ms,
    statusCode: r.status_code,
    error: r.error,
    webhookEndpoint: r.webhook_endpoint,
  };
}

export interface NewRun {
  runId: string;
  appId: string;
  projectId: string;
  appName: string;
  async: boolean;
  requestBody: Buffer;
  webhookEndpoint: string | null;
}

export interface RunOutcome {
  runId: string;
  status: RunStatus;
  statusCode: number | null;
  runTimeMs: number | null;
  error: string | null;
}

export function runsRepository(pool: Pool) {
  return {
    /** One round trip: the run row and its request body land together or not at all. */
    async createQueued(run: NewRun): Promise<void> {
      await pool.query(
        `WITH r AS (
           INSERT INTO runs (run_id, app_id, project_id, app_name, async, status, webhook_endpoint)
           VALUES ($1, $2, $3, $4, $5, 'queued', $6) RETURNING run_id)
         INSERT INTO run_payloads (run_id, kind, content_type, body)
         SELECT run_id, 'request', 'application/json', $7 FROM r`,
        [run.runId, run.appId, run.projectId, run.appName, run.async, run.webhookEndpoint, run.requestBody],
      );
    },

    async markRunning(runId: string): Promise<void> {
      await pool.query(
        `UPDATE runs SET status = 'running', started_at = coalesce(started_at, now())
         WHERE run_id = $1 AND finished_at IS NULL`,
        [runId],
      );
    },

    /** Idempotent: the first recorded outcome wins, so activity retries never overwrite it. */
    async finish(o: RunOutcome): Promise<boolean> {
      const { rowCount } = await pool.query(
        `UPDATE runs SET status = $2, status_code = $3, run_time_ms = $4, error = $5, finished_at = now(),
           started_at = coalesce(started_at, now())
         WHERE run_id = $1 AND finished_at IS NULL`,
        [o.runId, o.status, o.statusCode, o.runTimeMs, o.error],
      );
      return (rowCount ?? 0) > 0;
    },

    async get(runId: string): Promise<RunRecord | null> {
      const { rows } = await pool.query('SELECT * FROM runs WHERE run_id = $1', [runId]);
      return rows[0] ? toRun(rows[0]) : null;
    },

    async requestBody(runId: string): Promise<Buffer | null> {
      const { rows } = await pool.query(
        "SELECT body FROM run_payloads WHERE run_id = $1 AND kind = 'request'",
        [runId],
      );
      return rows[0]?.body ?? null;
    },

    /** Stored only while the run is unfinished: a late answer after a timeout is not the result. */
    async storeResponse(runId: string, contentType: string | null, body: Buffer): Promise<boolean> {
      const { rowCount } = await pool.query(
        `INSERT INTO run_payloads (run_id, kind, content_type, body)
         SELECT $1, 'response', $2, $3 WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = $1 AND finished_at IS NULL)
         ON CONFLICT (run_id, kind) DO UPDATE SET content_type = EXCLUDED.content_type, body = EXCLUDED.body`,
        [runId, contentType, body],
      );
      return (rowCount ?? 0) > 0;
    },

    async response(runId: string): Promise<{ contentType: string | null; body: Buffer } | null> {
      const { rows } = await pool.query(
        "SELECT content_type, body FROM run_payloads WHERE run_id = $1 AND kind = 'response'",
        [runId],
      );
      return rows[0] ? { contentType: rows[0].content_type, body: rows[0].body } : null;
    },
  };
}

export type RunsRepository = ReturnType<typeof runsRepository>;
