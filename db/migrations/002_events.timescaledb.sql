-- Dashboard metrics on TimescaleDB: raw events in hypertables, UTC rollups as continuous aggregates
-- (15 minutes on top of 1 minute) with real-time aggregation, refresh policies and retention.
-- Relation and column names are identical to 002_events.postgres.sql so one query text serves both.
-- This file runs inside one transaction, so the aggregates are created WITH NO DATA; the policies fill
-- them (tests and backfills call refresh_continuous_aggregate explicitly).
CREATE EXTENSION IF NOT EXISTS timescaledb;

CREATE TABLE request_events (
  ts             timestamptz NOT NULL,
  app_id         text NOT NULL,
  status         integer,              -- HTTP status; NULL when there was none (client gone, app unreachable)
  ws_close_code  integer,              -- set for WebSocket requests: the close code; classifies before status
  async          boolean NOT NULL DEFAULT false
);
SELECT create_hypertable('request_events', by_range('ts', INTERVAL '7 days'));
CREATE INDEX request_events_app_ts ON request_events (app_id, ts);

CREATE TABLE cost_events (
  ts               timestamptz NOT NULL,
  app_id           text NOT NULL,
  running_time_ms  bigint NOT NULL,
  gpu_ucents       bigint NOT NULL,
  cpu_ucents       bigint NOT NULL,
  mem_ucents       bigint NOT NULL
);
SELECT create_hypertable('cost_events', by_range('ts', INTERVAL '7 days'));
CREATE INDEX cost_events_app_ts ON cost_events (app_id, ts);

-- Buckets are UTC (no timezone argument): time_bucket with a zone merges the two fall-back hours in
-- TimescaleDB 2.23 and earlier; the query re-buckets these rows with date_trunc in the caller's zone.
CREATE MATERIALIZED VIEW request_rollup_1m
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT app_id,
       time_bucket(INTERVAL '1 minute', ts) AS bucket,
       count(*) AS n_total,
       count(*) FILTER (WHERE coalesce(ws_close_code, status) BETWEEN 200 AND 299) AS n_2xx,
       count(*) FILTER (WHERE coalesce(ws_close_code, status) BETWEEN 400 AND 499) AS n_4xx,
       count(*) FILTER (WHERE coalesce(ws_close_code, status) BETWEEN 500 AND 599) AS n_5xx,
       count(*) FILTER (WHERE ws_close_code BETWEEN 1000 AND 1001) AS n_ws_ok,
       count(*) FILTER (WHERE ws_close_code BETWEEN 1002 AND 1999) AS n_ws_err,
       count(*) FILTER (WHERE coalesce(ws_close_code, status) IS NULL
                           OR NOT (coalesce(ws_close_code, status) BETWEEN 200 AND 299
                                OR coalesce(ws_close_code, status) BETWEEN 400 AND 599
                                OR (ws_close_code IS NOT NULL AND ws_close_code BETWEEN 1000 AND 1999))) AS n_other
FROM request_events
GROUP BY app_id, time_bucket(INTERVAL '1 minute', ts)
WITH NO DATA;

CREATE MATERIALIZED VIEW request_rollup_15m
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT app_id,
       time_bucket(INTERVAL '15 minutes', bucket) AS bucket,
       sum(n_total)::bigint AS n_total,
       sum(n_2xx)::bigint AS n_2xx,
       sum(n_4xx)::bigint AS n_4xx,
       sum(n_5xx)::bigint AS n_5xx,
       sum(n_ws_ok)::bigint AS n_ws_ok,
       sum(n_ws_err)::bigint AS n_ws_err,
       sum(n_other)::bigint AS n_other
FROM request_rollup_1m
GROUP BY app_id, time_bucket(INTERVAL '15 minutes', bucket)
WITH NO DATA;

CREATE MATERIALIZED VIEW cost_rollup_1m
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT app_id,
       time_bucket(INTERVAL '1 minute', ts) AS bucket,
       count(*) AS n_events,
       sum(running_time_ms)::bigint AS running_time_ms,
       sum(gpu_ucents)::bigint AS gpu_ucents,
       sum(cpu_ucents)::bigint AS cpu_ucents,
       sum(mem_ucents)::bigint AS mem_ucents
FROM cost_events
GROUP BY app_id, time_bucket(INTERVAL '1 minute', ts)
WITH NO DATA;

CREATE MATERIALIZED VIEW cost_rollup_15m
WITH (timescaledb.continuous, timescaledb.materialized_only = false) AS
SELECT app_id,
       time_bucket(INTERVAL '15 minutes', bucket) AS bucket,
       sum(n_events)::bigint AS n_events,
       sum(running_time_ms)::bigint AS running_time_ms,
       sum(gpu_ucents)::bigint AS gpu_ucents,
       sum(cpu_ucents)::bigint AS cpu_ucents,
       sum(mem_ucents)::bigint AS mem_ucents
FROM cost_rollup_1m
GROUP BY app_id, time_bucket(INTERVAL '15 minutes', bucket)
WITH NO DATA;

-- Covering indexes: the 180-day queries read about 17k index entries per app and nothing else.
CREATE INDEX request_rollup_15m_cov ON request_rollup_15m (app_id, bucket)
  INCLUDE (n_total, n_2xx, n_4xx, n_5xx, n_ws_ok, n_ws_err, n_other);
CREATE INDEX cost_rollup_15m_cov ON cost_rollup_15m (app_id, bucket)
  INCLUDE (running_time_ms, gpu_ucents, cpu_ucents, mem_ucents);
CREATE INDEX request_rollup_1m_app_bucket ON request_rollup_1m (app_id, bucket);
CREATE INDEX cost_rollup_1m_app_bucket ON cost_rollup_1m (app_id, bucket);

-- Late rows (up to 3 hours for 1m, a day for 15m) are folded in by the policies; real-time
-- aggregation covers everything newer than the last refresh. Backfills older than that are
-- refreshed explicitly by `events import`.
SELECT add_continuous_aggregate_policy('request_rollup_1m', start_offset => INTERVAL '3 hours',
  end_offset => INTERVAL '1 minute', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('cost_rollup_1m', start_offset => INTERVAL '3 hours',
  end_offset => INTERVAL '1 minute', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('request_rollup_15m', start_offset => INTERVAL '1 day',
  end_offset => INTERVAL '15 minutes', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('cost_rollup_15m', start_offset => INTERVAL '1 day',
  end_offset => INTERVAL '15 minutes', schedule_interval => INTERVAL '5 minutes');

-- The endpoint never reads further back than 180 days (plus one bucket); raw and 1-minute data are
-- kept a little longer than that, 15-minute rollups about a year for operators.
SELECT add_retention_policy('request_events', INTERVAL '190 days');
SELECT add_retention_policy('cost_events', INTERVAL '190 days');
SELECT add_retention_policy('request_rollup_1m', INTERVAL '190 days');
SELECT add_retention_policy('cost_rollup_1m', INTERVAL '190 days');
SELECT add_retention_policy('request_rollup_15m', INTERVAL '400 days');
SELECT add_retention_policy('cost_rollup_15m', INTERVAL '400 days');
