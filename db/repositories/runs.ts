import type { Pool } from 'pg';
import type { RunStatus } from '../../workflows/definitions.js';
import type { RunStartSpec } from '../../lib/run-start.js';
import { epochMsToTimestamptz, intArrayLiteral } from '../sql-literals.js';

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
  payloadsPrunedAt: Date | null;
}

export function toRun(r: Record<string, any>): RunRecord {
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
    payloadsPrunedAt: r.payloads_pruned_at ?? null,
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

/** A finished synchronous run, written after the caller has its answer. */
export interface SyncRunRecord {
  runId: string;
  appId: string;
  projectId: string;
  appName: string;
  status: RunStatus;
  createdAt: Date;
  finishedAt: Date;
  runTimeMs: number;
  statusCode: number | null;
  error: string | null;
}

export interface RunListFilter {
  appId: string;
  status?: RunStatus;
  async?: boolean;
  limit: number;
  /** Keyset position: strictly older than this (created_at, run_id). */
  before?: { createdAt: Date; runId: string };
}

export type IdempotencyClaim =
  | { kind: 'new' }
  | { kind: 'existing'; runId: string }
  | { kind: 'conflict'; runId: string };

export function runsRepository(pool: Pool) {
  return {
    /** One round trip: the run row and its request body land together or not at all. */
    /**
     * The outbox write of an async run: row, request body, start spec and (with a webhook) delivery 0,
     * in one statement, so one round trip. Once it commits the run is accepted.
     */
    async createAccepted(run: NewRun, spec: RunStartSpec, delivery: { endpoint: string; secretSealed: Buffer | null } | null): Promise<void> {
      await pool.query(
        `WITH r AS (
           INSERT INTO runs (run_id, app_id, project_id, app_name, async, status, webhook_endpoint, start_spec)
           VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7) RETURNING run_id),
         p AS (
           INSERT INTO run_payloads (run_id, kind, content_type, body)
           SELECT run_id, 'request', 'application/json', $8 FROM r)
         INSERT INTO webhook_deliveries (run_id, delivery, endpoint, secret_sealed)
         SELECT run_id, 0, $9, $10 FROM r WHERE $9::text IS NOT NULL`,
        [run.runId, run.appId, run.projectId, run.appName, run.async, run.webhookEndpoint, JSON.stringify(spec), run.requestBody, delivery?.endpoint ?? null, delivery?.secretSealed ?? null],
      );
    },

    async markWorkflowsStarted(runIds: string[]): Promise<void> {
      if (!runIds.length) return;
      await pool.query('UPDATE runs SET workflow_started_at = now() WHERE run_id = ANY($1::text[]) AND workflow_started_at IS NULL', [runIds]);
    },

    /** Accepted async runs whose workflow start is not confirmed, oldest first, with their start spec. */
    async unstartedRuns(olderThanSeconds: number, limit = 200): Promise<{ runId: string; spec: RunStartSpec }[]> {
      const { rows } = await pool.query(
        `SELECT run_id, start_spec FROM runs
         WHERE async AND workflow_started_at IS NULL AND finished_at IS NULL AND start_spec IS NOT NULL
           AND created_at < now() - make_interval(secs => $1)
         ORDER BY created_at LIMIT $2`,
        [olderThanSeconds, limit],
      );
      return rows.map((r) => ({ runId: r.run_id, spec: r.start_spec as RunStartSpec }));
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

    /** Many finished sync runs in one statement (the run log batches them off the request path). */
    async insertSyncRuns(rows: SyncRunRecord[]): Promise<void> {
      if (!rows.length) return;
      await pool.query(
        `INSERT INTO runs (run_id, app_id, project_id, app_name, async, status, created_at, started_at, finished_at, run_time_ms, status_code, error)
         SELECT r.run_id, r.app_id, r.project_id, r.app_name, false, r.status, ${epochMsToTimestamptz('r.created_at')}, ${epochMsToTimestamptz('r.created_at')},
           ${epochMsToTimestamptz('r.finished_at')}, r.run_time_ms, r.status_code, r.error
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::int[], $9::int[], $10::text[])
           AS r(run_id, app_id, project_id, app_name, status, created_at, finished_at, run_time_ms, status_code, error)
         ON CONFLICT (run_id) DO NOTHING`,
        [
          rows.map((r) => r.runId), rows.map((r) => r.appId), rows.map((r) => r.projectId), rows.map((r) => r.appName),
          rows.map((r) => r.status),
          intArrayLiteral(rows, (r) => r.createdAt.getTime()), intArrayLiteral(rows, (r) => r.finishedAt.getTime()), rows.map((r) => r.runTimeMs),
          rows.map((r) => r.statusCode), rows.map((r) => r.error),
        ],
      );
    },

    /** Newest first, keyset-paged so pages stay stable while new runs arrive. */
    async list(f: RunListFilter): Promise<RunRecord[]> {
      const { rows } = await pool.query(
        `SELECT * FROM runs
         WHERE app_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::boolean IS NULL OR async = $3)
           AND ($4::timestamptz IS NULL OR (created_at, run_id) < ($4, $5::text))
         ORDER BY created_at DESC, run_id DESC LIMIT $6`,
        [f.appId, f.status ?? null, f.async ?? null, f.before?.createdAt ?? null, f.before?.runId ?? null, f.limit],
      );
      return rows.map(toRun);
    },

    /**
     * Claims an Idempotency-Key for a new run, atomically: concurrent identical requests all see the
     * one run that won. A key older than the TTL is free again.
     */
    async claimIdempotencyKey(appId: string, key: string, requestSha256: Buffer, runId: string, ttlSeconds: number): Promise<IdempotencyClaim> {
      const { rows } = await pool.query(
        `INSERT INTO idempotency_keys (app_id, key, request_sha256, run_id) VALUES ($1, $2, $3, $4)
         ON CONFLICT (app_id, key) DO UPDATE SET request_sha256 = EXCLUDED.request_sha256, run_id = EXCLUDED.run_id, created_at = now()
           WHERE idempotency_keys.created_at < now() - make_interval(secs => $5)
         RETURNING run_id`,
        [appId, key, requestSha256, runId, ttlSeconds],
      );
      if (rows[0]?.run_id === runId) return { kind: 'new' };
      const existing = await pool.query('SELECT run_id, request_sha256 FROM idempotency_keys WHERE app_id = $1 AND key = $2', [appId, key]);
      const row = existing.rows[0];
      return (row.request_sha256 as Buffer).equals(requestSha256) ? { kind: 'existing', runId: row.run_id } : { kind: 'conflict', runId: row.run_id };
    },

    async releaseIdempotencyKey(appId: string, key: string, runId: string): Promise<void> {
      await pool.query('DELETE FROM idempotency_keys WHERE app_id = $1 AND key = $2 AND run_id = $3', [appId, key, runId]);
    },

    /** Deletes bodies of runs finished longer ago than the retention; returns how many runs were pruned. */
    async pruneExpiredPayloads(retentionSeconds: number, batch = 5000): Promise<number> {
      const { rows } = await pool.query(
        `WITH expired AS (
           SELECT run_id FROM runs
           WHERE payloads_pruned_at IS NULL AND finished_at < now() - make_interval(secs => $1)
           ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED),
         gone AS (DELETE FROM run_payloads p USING expired e WHERE p.run_id = e.run_id)
         UPDATE runs r SET payloads_pruned_at = now() FROM expired e WHERE r.run_id = e.run_id RETURNING r.run_id`,
        [retentionSeconds, batch],
      );
      return rows.length;
    },

    /** Legacy async runs (before the start outbox) still queued long after creation: their start may never have happened. */
    async staleQueuedRunIds(olderThanSeconds: number, limit = 500): Promise<string[]> {
      const { rows } = await pool.query(
        `SELECT run_id FROM runs WHERE status = 'queued' AND async AND finished_at IS NULL AND start_spec IS NULL
           AND created_at < now() - make_interval(secs => $1) ORDER BY created_at LIMIT $2`,
        [olderThanSeconds, limit],
      );
      return rows.map((r) => r.run_id);
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
