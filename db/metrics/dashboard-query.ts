import pg from 'pg';
import { withTransaction } from '../transaction.js';
import type { Interval } from './period.js';

type Queryable = Pick<pg.ClientBase, 'query'>;

/** One bucket of the series: counts and micro-cents as BigInt, exact. */
export interface BucketRow {
  /** First instant of the bucket. */
  bucket: Date;
  n_total: bigint;
  n_2xx: bigint;
  n_4xx: bigint;
  n_5xx: bigint;
  n_ws_ok: bigint;
  n_ws_err: bigint;
  n_other: bigint;
  running_time_ms: bigint;
  gpu_ucents: bigint;
  cpu_ucents: bigint;
  mem_ucents: bigint;
}

// A bucket is the set of instants sharing a label: the local calendar day or month in the zone, or,
// for minutes and hours, the local wall-clock minute or hour together with its UTC offset (so the two
// 01:00 hours of a fall-back night are two buckets, as are Lord Howe's 01:00+11:00 and 01:00+10:30).
// The bucket's key is its first instant. Every bucket boundary lies on the UTC 15-minute grid (1-minute
// for minutes), which the rollups refine, so summing the rollup rows in [bucket, next bucket) is exact.
// The bucket list comes first (zero-fill for free), then one index range scan per bucket.
interface UnitPlan {
  buckets: string;
  requests: string;
  costs: string;
}

const ORIGIN = `'2000-01-01T00:00:00Z'::timestamptz`;

// Minutes and hours: label every slot of the UTC grid around the period; a label's first slot is the
// bucket start; the buckets reported are those with a slot in [start, end).
function subDayBuckets(unit: 'minute' | 'hour', slotText: string, reachText: string): string {
  const slot = `interval '${slotText}'`;
  const reach = `interval '${reachText}'`;
  const lo = `date_bin(${slot}, $2::timestamptz, ${ORIGIN})`;
  return `grid AS (
  SELECT g AS slot, date_trunc('${unit}', g, $4::text) AS label
  FROM generate_series(${lo} - ${reach}, $3::timestamptz + ${reach}, ${slot}) AS g),
starts AS (
  SELECT label, min(slot) AS bucket, bool_or(slot >= ${lo} AND slot < $3::timestamptz) AS reported
  FROM grid GROUP BY label),
ordered AS (SELECT bucket, reported, lead(bucket) OVER (ORDER BY bucket) AS next FROM starts),
buckets AS (SELECT bucket, next FROM ordered WHERE reported)`;
}

// Days and months: the local calendar labels from the one holding start to the one holding the last
// instant before end, plus one (its start ends the last bucket). Each label's first instant is the
// earliest quarter-hour at or up to 2 hours before its local midnight (as PostgreSQL resolves it) that
// still carries the label: that finds the first of two ambiguous midnights and the end of a gap.
function calendarBuckets(unit: 'day' | 'month'): string {
  const step = `interval '1 ${unit}'`;
  return `labels AS (
  SELECT l FROM generate_series(date_trunc('${unit}', $2::timestamptz AT TIME ZONE $4::text),
    date_trunc('${unit}', ($3::timestamptz - interval '1 microsecond') AT TIME ZONE $4::text) + ${step}, ${step}) AS l),
starts AS (
  SELECT l, s.bucket FROM labels, LATERAL (
    SELECT min(x) AS bucket FROM generate_series((l AT TIME ZONE $4::text) - interval '2 hours', l AT TIME ZONE $4::text, interval '15 minutes') AS x
    WHERE date_trunc('${unit}', x AT TIME ZONE $4::text) = l) AS s),
ordered AS (SELECT bucket, lead(bucket) OVER (ORDER BY bucket) AS next FROM starts WHERE bucket IS NOT NULL),
buckets AS (SELECT bucket, next FROM ordered WHERE next IS NOT NULL)`;
}

const PLANS: Record<Interval, UnitPlan> = {
  minute: { buckets: subDayBuckets('minute', '1 minute', '2 minutes'), requests: 'request_rollup_1m', costs: 'cost_rollup_1m' },
  hour: { buckets: subDayBuckets('hour', '15 minutes', '2 hours'), requests: 'request_rollup_15m', costs: 'cost_rollup_15m' },
  day: { buckets: calendarBuckets('day'), requests: 'request_rollup_15m', costs: 'cost_rollup_15m' },
  month: { buckets: calendarBuckets('month'), requests: 'request_rollup_15m', costs: 'cost_rollup_15m' },
};

function buildSql(p: UnitPlan): string {
  return `
WITH ${p.buckets},
req AS (
  SELECT b.bucket,
    sum(r.n_total)::bigint AS n_total, sum(r.n_2xx)::bigint AS n_2xx, sum(r.n_4xx)::bigint AS n_4xx,
    sum(r.n_5xx)::bigint AS n_5xx, sum(r.n_ws_ok)::bigint AS n_ws_ok, sum(r.n_ws_err)::bigint AS n_ws_err,
    sum(r.n_other)::bigint AS n_other
  FROM buckets b JOIN ${p.requests} r ON r.app_id = $1 AND r.bucket >= b.bucket AND r.bucket < b.next
  GROUP BY b.bucket),
cost AS (
  SELECT b.bucket,
    sum(c.running_time_ms)::bigint AS running_time_ms, sum(c.gpu_ucents)::bigint AS gpu_ucents,
    sum(c.cpu_ucents)::bigint AS cpu_ucents, sum(c.mem_ucents)::bigint AS mem_ucents
  FROM buckets b JOIN ${p.costs} c ON c.app_id = $1 AND c.bucket >= b.bucket AND c.bucket < b.next
  GROUP BY b.bucket)
SELECT b.bucket,
  coalesce(q.n_total, 0)::bigint AS n_total, coalesce(q.n_2xx, 0)::bigint AS n_2xx,
  coalesce(q.n_4xx, 0)::bigint AS n_4xx, coalesce(q.n_5xx, 0)::bigint AS n_5xx,
  coalesce(q.n_ws_ok, 0)::bigint AS n_ws_ok, coalesce(q.n_ws_err, 0)::bigint AS n_ws_err,
  coalesce(q.n_other, 0)::bigint AS n_other,
  coalesce(c.running_time_ms, 0)::bigint AS running_time_ms, coalesce(c.gpu_ucents, 0)::bigint AS gpu_ucents,
  coalesce(c.cpu_ucents, 0)::bigint AS cpu_ucents, coalesce(c.mem_ucents, 0)::bigint AS mem_ucents
FROM buckets b LEFT JOIN req q USING (bucket) LEFT JOIN cost c USING (bucket)
ORDER BY b.bucket`;
}

/** The SQL text per interval; identical on plain PostgreSQL and TimescaleDB. */
export const DASHBOARD_SQL: Record<Interval, string> = {
  minute: buildSql(PLANS.minute),
  hour: buildSql(PLANS.hour),
  day: buildSql(PLANS.day),
  month: buildSql(PLANS.month),
};

/**
 * The same answer computed from the raw event tables instead of the rollups: the benchmark's and the
 * tests' reference. Slow on large data by design.
 */
export const DASHBOARD_SQL_FROM_RAW: Record<Interval, string> = Object.fromEntries(
  (Object.keys(PLANS) as Interval[]).map((unit) => {
    const raw = {
      ...PLANS[unit],
      requests: `(SELECT app_id, ts AS bucket, 1 AS n_total,
          (coalesce(ws_close_code, status) BETWEEN 200 AND 299)::int AS n_2xx,
          (coalesce(ws_close_code, status) BETWEEN 400 AND 499)::int AS n_4xx,
          (coalesce(ws_close_code, status) BETWEEN 500 AND 599)::int AS n_5xx,
          coalesce(ws_close_code BETWEEN 1000 AND 1001, false)::int AS n_ws_ok,
          coalesce(ws_close_code BETWEEN 1002 AND 1999, false)::int AS n_ws_err,
          (coalesce(ws_close_code, status) IS NULL OR NOT (coalesce(ws_close_code, status) BETWEEN 200 AND 299
             OR coalesce(ws_close_code, status) BETWEEN 400 AND 599
             OR coalesce(ws_close_code BETWEEN 1000 AND 1999, false)))::int AS n_other
        FROM request_events)`,
      costs: '(SELECT app_id, ts AS bucket, running_time_ms, gpu_ucents, cpu_ucents, mem_ucents FROM cost_events)',
    };
    return [unit, buildSql(raw)];
  }),
) as Record<Interval, string>;

// int8 as BigInt for this query only: the pool's global parsers stay untouched.
const bigintTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => BigInt(v);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface DashboardQuery {
  appId: string;
  start: Date;
  end: Date;
  interval: Interval;
  tz: string;
}

/** Every bucket of [start, end) in `tz`, zero-filled, ascending; from the rollups unless `fromRaw`. */
export async function queryDashboardBuckets(db: pg.Pool | pg.ClientBase, q: DashboardQuery, opts: { fromRaw?: boolean } = {}): Promise<BucketRow[]> {
  const text = (opts.fromRaw ? DASHBOARD_SQL_FROM_RAW : DASHBOARD_SQL)[q.interval];
  const config = {
    text,
    values: [q.appId, q.start.toISOString(), q.end.toISOString(), q.tz],
    types: bigintTypes,
  } as pg.QueryConfig;
  // The planner cannot know how few rollup rows each bucket's range holds, overestimates by orders of
  // magnitude and crosses jit_above_cost: JIT compilation then costs ~30 ms of a ~5 ms query.
  return withTransaction(db, async (client) => {
    await client.query('SET LOCAL jit = off');
    const { rows } = await client.query(config);
    return rows as BucketRow[];
  }, 'BEGIN READ ONLY');
}
