import type { ClientBase, Pool } from 'pg';
import { toRun, type RunRecord, type SyncRunRecord } from './runs.js';
import { withTransaction } from '../transaction.js';

export type DeliveryState = 'pending' | 'delivered' | 'failed';
export type AttemptOutcome = 'delivered' | 'retry' | 'rejected';

export interface WebhookDelivery {
  runId: string;
  delivery: number;
  endpoint: string;
  secretSealed: Buffer | null;
  state: DeliveryState;
  createdAt: Date;
  workflowStartedAt: Date | null;
  finishedAt: Date | null;
  error: string | null;
}

export interface WebhookAttempt {
  runId: string;
  delivery: number;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  outcome: AttemptOutcome;
}

export interface NewDelivery {
  runId: string;
  endpoint: string;
  secretSealed: Buffer | null;
}

function toDelivery(r: Record<string, any>): WebhookDelivery {
  return {
    runId: r.run_id,
    delivery: r.delivery,
    endpoint: r.endpoint,
    secretSealed: r.secret_sealed,
    state: r.state,
    createdAt: r.created_at,
    workflowStartedAt: r.workflow_started_at,
    finishedAt: r.finished_at,
    error: r.error,
  };
}

function toAttempt(r: Record<string, any>): WebhookAttempt {
  return {
    runId: r.run_id,
    delivery: r.delivery,
    attempt: r.attempt,
    startedAt: r.started_at,
    durationMs: r.duration_ms,
    statusCode: r.status_code,
    error: r.error,
    outcome: r.outcome,
  };
}

type Queryable = Pool | ClientBase;

export function webhooksRepository(pool: Pool) {
  return {
    /** Delivery 0 of an async run, written before its workflow starts. */
    async createFirstDelivery(d: NewDelivery, db: Queryable = pool): Promise<void> {
      await db.query(
        `INSERT INTO webhook_deliveries (run_id, delivery, endpoint, secret_sealed) VALUES ($1, 0, $2, $3)
         ON CONFLICT (run_id, delivery) DO NOTHING`,
        [d.runId, d.endpoint, d.secretSealed],
      );
    },

    /**
     * The outbox write of a synchronous run with a webhook: its run row, the app's response and
     * delivery 0 land together, so the delivery can always be (re)started from PostgreSQL alone.
     */
    async recordSyncRunForDelivery(run: SyncRunRecord, response: { contentType: string | null; body: Buffer } | null, d: NewDelivery): Promise<void> {
      await withTransaction(pool, async (client) => {
        await client.query(
          `INSERT INTO runs (run_id, app_id, project_id, app_name, async, status, created_at, started_at, finished_at, run_time_ms, status_code, error, webhook_endpoint)
           VALUES ($1, $2, $3, $4, false, $5, $6, $6, $7, $8, $9, $10, $11) ON CONFLICT (run_id) DO NOTHING`,
          [run.runId, run.appId, run.projectId, run.appName, run.status, run.createdAt, run.finishedAt, run.runTimeMs, run.statusCode, run.error, d.endpoint],
        );
        if (response) {
          await client.query(
            `INSERT INTO run_payloads (run_id, kind, content_type, body) VALUES ($1, 'response', $2, $3)
             ON CONFLICT (run_id, kind) DO NOTHING`,
            [run.runId, response.contentType, response.body],
          );
        }
        await this.createFirstDelivery(d, client);
      });
    },

    /**
     * A new delivery of the same run (same endpoint, same sealed secret), unless one is still
     * pending. Returns its number, or null when a delivery is pending (or a concurrent call won).
     */
    async createRedelivery(runId: string): Promise<number | null> {
      const { rows } = await pool.query(
        `INSERT INTO webhook_deliveries (run_id, delivery, endpoint, secret_sealed)
         SELECT f.run_id, (SELECT max(delivery) + 1 FROM webhook_deliveries WHERE run_id = $1), f.endpoint, f.secret_sealed
         FROM webhook_deliveries f
         WHERE f.run_id = $1 AND f.delivery = 0
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.run_id = $1 AND p.state = 'pending')
         ON CONFLICT (run_id, delivery) DO NOTHING
         RETURNING delivery`,
        [runId],
      );
      return rows[0]?.delivery ?? null;
    },

    async get(runId: string, delivery: number): Promise<WebhookDelivery | null> {
      const { rows } = await pool.query('SELECT * FROM webhook_deliveries WHERE run_id = $1 AND delivery = $2', [runId, delivery]);
      return rows[0] ? toDelivery(rows[0]) : null;
    },

    /**
     * Everything one attempt needs, in one round trip: the delivery (endpoint, sealed secret), the
     * run and the app's stored response.
     */
    async forAttempt(
      runId: string,
      delivery: number,
    ): Promise<{ delivery: WebhookDelivery; run: RunRecord; response: { contentType: string | null; body: Buffer } | null; attemptsMade: number } | null> {
      const { rows } = await pool.query(
        `SELECT d.run_id, d.delivery, d.endpoint, d.secret_sealed, d.state, d.created_at AS d_created_at,
                d.workflow_started_at, d.finished_at AS d_finished_at, d.error AS d_error,
                r.*, p.content_type AS response_content_type, p.body AS response_body,
                (SELECT count(*)::int FROM webhook_attempts a WHERE a.run_id = d.run_id AND a.delivery = d.delivery) AS attempts_made
         FROM webhook_deliveries d JOIN runs r ON r.run_id = d.run_id
         LEFT JOIN run_payloads p ON p.run_id = d.run_id AND p.kind = 'response'
         WHERE d.run_id = $1 AND d.delivery = $2`,
        [runId, delivery],
      );
      const r = rows[0];
      if (!r) return null;
      return {
        delivery: toDelivery({ ...r, created_at: r.d_created_at, finished_at: r.d_finished_at, error: r.d_error }),
        run: toRun(r),
        response: r.response_body ? { contentType: r.response_content_type, body: r.response_body } : null,
        attemptsMade: r.attempts_made,
      };
    },

    async markWorkflowStarted(runId: string, delivery: number): Promise<void> {
      await pool.query(
        'UPDATE webhook_deliveries SET workflow_started_at = coalesce(workflow_started_at, now()) WHERE run_id = $1 AND delivery = $2',
        [runId, delivery],
      );
    },

    /**
     * Deliveries whose workflow start is not confirmed: sync runs and redeliveries (an async run's
     * delivery 0 is started by its own workflow once the run ends, so it is never re-driven here).
     */
    async unstarted(olderThanSeconds: number, limit = 100): Promise<{ runId: string; delivery: number }[]> {
      const { rows } = await pool.query(
        `SELECT d.run_id, d.delivery FROM webhook_deliveries d JOIN runs r ON r.run_id = d.run_id
         WHERE d.workflow_started_at IS NULL AND d.state = 'pending' AND d.created_at < now() - make_interval(secs => $1)
           AND (d.delivery > 0 OR NOT r.async)
         ORDER BY d.created_at LIMIT $2`,
        [olderThanSeconds, limit],
      );
      return rows.map((r) => ({ runId: r.run_id, delivery: r.delivery }));
    },

    /** Idempotent per attempt number: a re-run of the same attempt overwrites its own row. */
    async recordAttempt(a: WebhookAttempt): Promise<void> {
      await pool.query(
        `INSERT INTO webhook_attempts (run_id, delivery, attempt, started_at, duration_ms, status_code, error, outcome)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (run_id, delivery, attempt) DO UPDATE SET started_at = EXCLUDED.started_at,
           duration_ms = EXCLUDED.duration_ms, status_code = EXCLUDED.status_code, error = EXCLUDED.error, outcome = EXCLUDED.outcome`,
        [a.runId, a.delivery, a.attempt, a.startedAt, a.durationMs, a.statusCode, a.error, a.outcome],
      );
    },

    /** The final state; the first one recorded wins, so retries of the bookkeeping never flip it. */
    async finish(runId: string, delivery: number, state: 'delivered' | 'failed', error: string | null): Promise<boolean> {
      const { rowCount } = await pool.query(
        `UPDATE webhook_deliveries SET state = $3, error = $4, finished_at = now(),
           workflow_started_at = coalesce(workflow_started_at, now())
         WHERE run_id = $1 AND delivery = $2 AND state = 'pending'`,
        [runId, delivery, state, error],
      );
      return (rowCount ?? 0) > 0;
    },

    /** Every delivery of a run, oldest first, each with its attempts in order. */
    async deliveriesOf(runId: string): Promise<(WebhookDelivery & { attempts: WebhookAttempt[] })[]> {
      const [d, a] = await Promise.all([
        pool.query('SELECT * FROM webhook_deliveries WHERE run_id = $1 ORDER BY delivery', [runId]),
        pool.query('SELECT * FROM webhook_attempts WHERE run_id = $1 ORDER BY delivery, attempt', [runId]),
      ]);
      const attempts = a.rows.map(toAttempt);
      return d.rows.map((r) => {
        const delivery = toDelivery(r);
        return { ...delivery, attempts: attempts.filter((x) => x.delivery === delivery.delivery) };
      });
    },

    /** State and attempt count of each run's latest delivery, for run views and lists. */
    async summaries(runIds: string[]): Promise<Map<string, { state: DeliveryState; attempts: number }>> {
      const out = new Map<string, { state: DeliveryState; attempts: number }>();
      if (!runIds.length) return out;
      const { rows } = await pool.query(
        `SELECT DISTINCT ON (d.run_id) d.run_id, d.state,
           (SELECT count(*)::int FROM webhook_attempts a WHERE a.run_id = d.run_id AND a.delivery = d.delivery) AS attempts
         FROM webhook_deliveries d WHERE d.run_id = ANY($1::text[])
         ORDER BY d.run_id, d.delivery DESC`,
        [runIds],
      );
      for (const r of rows) out.set(r.run_id, { state: r.state, attempts: r.attempts });
      return out;
    },
  };
}

export type WebhooksRepository = ReturnType<typeof webhooksRepository>;
