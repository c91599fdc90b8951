import type pg from 'pg';
import type { CostEvent, RequestEvent } from './event-types.js';
import { epochMsToTimestamptz, intArrayLiteral } from '../sql-literals.js';

type Queryable = Pick<pg.ClientBase, 'query'>;

// Which backend maintains the rollups is a property of the schema (tables on plain PostgreSQL,
// continuous aggregates on TimescaleDB), so it is read once per database and remembered.
const maintainedByApp = new WeakMap<object, Promise<boolean>>();

/** True when the rollups are plain tables that every insert must keep current (no TimescaleDB). */
export function rollupsMaintainedByApp(db: Queryable, cacheKey: object = db): Promise<boolean> {
  let known = maintainedByApp.get(cacheKey);
  if (!known) {
    known = db
      .query("SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass('request_rollup_1m')")
      .then((r) => {
        if (!r.rows[0]) throw new Error('metrics tables missing: run the migrations (002_events)');
        return r.rows[0].relkind === 'r';
      });
    known.catch(() => maintainedByApp.delete(cacheKey));
    maintainedByApp.set(cacheKey, known);
  }
  return known;
}

// The same classification as the continuous aggregate in 002_events.timescaledb.sql; a close code
// classifies a WebSocket request, otherwise the HTTP status does; NULL counts as other.
const REQUEST_COUNTS = `
  count(*) AS n_total,
  count(*) FILTER (WHERE coalesce(ws_close_code, status) BETWEEN 200 AND 299) AS n_2xx,
  count(*) FILTER (WHERE coalesce(ws_close_code, status) BETWEEN 400 AND 499) AS n_4xx,
  count(*) FILTER (WHERE coalesce(ws_close_code, status) BETWEEN 500 AND 599) AS n_5xx,
  count(*) FILTER (WHERE ws_close_code BETWEEN 1000 AND 1001) AS n_ws_ok,
  count(*) FILTER (WHERE ws_close_code BETWEEN 1002 AND 1999) AS n_ws_err,
  count(*) FILTER (WHERE coalesce(ws_close_code, status) IS NULL
                      OR NOT (coalesce(ws_close_code, status) BETWEEN 200 AND 299
                           OR coalesce(ws_close_code, status) BETWEEN 400 AND 599
                           OR (ws_close_code IS NOT NULL AND ws_close_code BETWEEN 1000 AND 1999))) AS n_other`;

const REQUEST_ADD = `n_total = r.n_total + EXCLUDED.n_total, n_2xx = r.n_2xx + EXCLUDED.n_2xx,
  n_4xx = r.n_4xx + EXCLUDED.n_4xx, n_5xx = r.n_5xx + EXCLUDED.n_5xx, n_ws_ok = r.n_ws_ok + EXCLUDED.n_ws_ok,
  n_ws_err = r.n_ws_err + EXCLUDED.n_ws_err, n_other = r.n_other + EXCLUDED.n_other`;

const COST_SUMS = `count(*) AS n_events, sum(running_time_ms)::bigint, sum(gpu_ucents)::bigint,
  sum(cpu_ucents)::bigint, sum(mem_ucents)::bigint`;

const COST_ADD = `n_events = r.n_events + EXCLUDED.n_events, running_time_ms = r.running_time_ms + EXCLUDED.running_time_ms,
  gpu_ucents = r.gpu_ucents + EXCLUDED.gpu_ucents, cpu_ucents = r.cpu_ucents + EXCLUDED.cpu_ucents,
  mem_ucents = r.mem_ucents + EXCLUDED.mem_ucents`;

// Columns travel as compact literals (db/sql-literals.ts); app ids as indexes into a short list.
const REQUEST_SRC = `SELECT ${epochMsToTimestamptz('t.ms')} AS ts, ($2::text[])[t.app] AS app_id,
    t.status, t.ws_close_code, t.async
  FROM unnest($1::bigint[], $3::int[], $4::int[], $5::int[], $6::bool[]) AS t(ms, app, status, ws_close_code, async)`;
const COST_SRC = `SELECT ${epochMsToTimestamptz('t.ms')} AS ts, ($2::text[])[t.app] AS app_id,
    t.running_time_ms, t.gpu_ucents, t.cpu_ucents, t.mem_ucents
  FROM unnest($1::bigint[], $3::int[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
    AS t(ms, app, running_time_ms, gpu_ucents, cpu_ucents, mem_ucents)`;

const INSERT_REQUESTS_RAW = `INSERT INTO request_events (ts, app_id, status, ws_close_code, async) ${REQUEST_SRC}`;
const INSERT_COSTS_RAW = `INSERT INTO cost_events (ts, app_id, running_time_ms, gpu_ucents, cpu_ucents, mem_ucents) ${COST_SRC}`;

// One statement: the raw rows and both rollups change atomically, so the rollups are never behind
// the raw events. Rows are upserted in (app_id, bucket) order so concurrent writers lock in the same
// order and cannot deadlock.
const rollupUpsert = (table: string, width: string, sums: string, add: string) => `
  ${table}_up AS (
    INSERT INTO ${table} AS r SELECT app_id, date_bin('${width}', ts, '2000-01-01T00:00:00Z') AS bucket, ${sums}
    FROM src GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (app_id, bucket) DO UPDATE SET ${add})`;

const INSERT_REQUESTS_WITH_ROLLUPS = `WITH src AS MATERIALIZED (${REQUEST_SRC}),
  raw AS (INSERT INTO request_events (ts, app_id, status, ws_close_code, async) SELECT * FROM src),
  ${rollupUpsert('request_rollup_1m', '1 minute', REQUEST_COUNTS, REQUEST_ADD)},
  ${rollupUpsert('request_rollup_15m', '15 minutes', REQUEST_COUNTS, REQUEST_ADD)}
SELECT count(*) AS n FROM src`;

const INSERT_COSTS_WITH_ROLLUPS = `WITH src AS MATERIALIZED (${COST_SRC}),
  raw AS (INSERT INTO cost_events (ts, app_id, running_time_ms, gpu_ucents, cpu_ucents, mem_ucents) SELECT * FROM src),
  ${rollupUpsert('cost_rollup_1m', '1 minute', COST_SUMS, COST_ADD)},
  ${rollupUpsert('cost_rollup_15m', '15 minutes', COST_SUMS, COST_ADD)}
SELECT count(*) AS n FROM src`;

/** Largest batch sent as one statement; callers may pass more, it is split. */
export const MAX_ROWS_PER_STATEMENT = 10_000;

export interface InsertOptions {
  /** Identifies the database when `db` is a short-lived client (e.g. the pool it came from). */
  cacheKey?: object;
  /** Rows per statement (default 10k). The PGlite TimescaleDB build needs under ~1,000: it crashes on protocol messages over ~64 KB. */
  batchRows?: number;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** App ids as a list of distinct ids and, per row, a 1-based index into it. */
function appIndexes(events: readonly { appId: string }[]): { apps: string[]; index: string } {
  const apps: string[] = [];
  const seen = new Map<string, number>();
  let index = '{';
  for (let i = 0; i < events.length; i++) {
    const id = events[i].appId;
    let n = seen.get(id);
    if (n === undefined) {
      n = apps.push(id);
      seen.set(id, n);
    }
    index += i === 0 ? `${n}` : `,${n}`;
  }
  return { apps, index: index + '}' };
}

function requestParams(batch: readonly RequestEvent[]): unknown[] {
  const { apps, index } = appIndexes(batch);
  let asyncFlags = '{';
  for (let i = 0; i < batch.length; i++) asyncFlags += (i > 0 ? ',' : '') + (batch[i].async ? 't' : 'f');
  return [intArrayLiteral(batch, (e) => e.ts.getTime()), apps, index, intArrayLiteral(batch, (e) => e.status), intArrayLiteral(batch, (e) => e.wsCloseCode), asyncFlags + '}'];
}

function costParams(batch: readonly CostEvent[]): unknown[] {
  const { apps, index } = appIndexes(batch);
  return [
    intArrayLiteral(batch, (e) => e.ts.getTime()),
    apps,
    index,
    intArrayLiteral(batch, (e) => e.runningTimeMs),
    intArrayLiteral(batch, (e) => e.gpuUcents),
    intArrayLiteral(batch, (e) => e.cpuUcents),
    intArrayLiteral(batch, (e) => e.memoryUcents),
  ];
}

/**
 * Writes request events with unnest (one round trip per 10k rows). On plain PostgreSQL the same
 * statement adds them into the rollup tables. Pass a client inside a transaction to make several
 * batches atomic.
 */
export async function insertRequestEvents(db: Queryable, events: readonly RequestEvent[], opts: InsertOptions = {}): Promise<number> {
  if (events.length === 0) return 0;
  const withRollups = await rollupsMaintainedByApp(db, opts.cacheKey ?? db);
  const sql = withRollups ? INSERT_REQUESTS_WITH_ROLLUPS : INSERT_REQUESTS_RAW;
  for (const batch of chunks(events, opts.batchRows ?? MAX_ROWS_PER_STATEMENT)) await db.query(sql, requestParams(batch));
  return events.length;
}

/** Writes cost events; see insertRequestEvents. */
export async function insertCostEvents(db: Queryable, events: readonly CostEvent[], opts: InsertOptions = {}): Promise<number> {
  if (events.length === 0) return 0;
  const withRollups = await rollupsMaintainedByApp(db, opts.cacheKey ?? db);
  const sql = withRollups ? INSERT_COSTS_WITH_ROLLUPS : INSERT_COSTS_RAW;
  for (const batch of chunks(events, opts.batchRows ?? MAX_ROWS_PER_STATEMENT)) await db.query(sql, costParams(batch));
  return events.length;
}

const CAGGS = ['request_rollup_1m', 'cost_rollup_1m', 'request_rollup_15m', 'cost_rollup_15m'] as const;

/**
 * On TimescaleDB, folds rows written below the aggregates' watermark (backfills) into the
 * continuous aggregates for [from, to). Each CALL must be its own statement outside a transaction.
 * A no-op on plain PostgreSQL, where the rollups are already current.
 */
export async function refreshRollups(db: Queryable, from: Date, to: Date): Promise<void> {
  if (await rollupsMaintainedByApp(db)) return;
  // Widen to whole 15-minute buckets so the hierarchical aggregate covers complete children.
  const q = 15 * 60_000;
  const start = new Date(Math.floor(from.getTime() / q) * q).toISOString();
  const end = new Date(Math.ceil((to.getTime() + 1) / q) * q).toISOString();
  for (const view of CAGGS) {
    await db.query(`CALL refresh_continuous_aggregate('${view}', $1::timestamptz, $2::timestamptz)`, [start, end]);
  }
}
