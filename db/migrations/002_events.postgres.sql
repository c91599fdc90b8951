-- Dashboard metrics on plain PostgreSQL (no TimescaleDB): raw events plus UTC rollup tables that the
-- application keeps current in the same statement as every insert (db/metrics/insert-events.ts).
-- Column and relation names are identical to 002_events.timescaledb.sql so one query text serves both.
-- Money is integer micro-cents (1 cent = 1,000,000 micro-cents): sums are exact, totals equal buckets.

CREATE TABLE request_events (
  ts             timestamptz NOT NULL,
  app_id         text NOT NULL,
  status         integer,              -- HTTP status; NULL when there was none (client gone, app unreachable)
  ws_close_code  integer,              -- set for WebSocket requests: the close code; classifies before status
  async          boolean NOT NULL DEFAULT false
);
CREATE INDEX request_events_app_ts ON request_events (app_id, ts);

CREATE TABLE cost_events (
  ts               timestamptz NOT NULL,
  app_id           text NOT NULL,
  running_time_ms  bigint NOT NULL,
  gpu_ucents       bigint NOT NULL,
  cpu_ucents       bigint NOT NULL,
  mem_ucents       bigint NOT NULL
);
CREATE INDEX cost_events_app_ts ON cost_events (app_id, ts);

-- 1-minute rollups serve minute buckets; 15-minute rollups serve hour, day and month buckets (every
-- zone offset in use is a multiple of 15 minutes, so the UTC 15-minute grid refines every local grid).
CREATE TABLE request_rollup_1m (
  app_id    text NOT NULL,
  bucket    timestamptz NOT NULL,
  n_total   bigint NOT NULL,
  n_2xx     bigint NOT NULL,
  n_4xx     bigint NOT NULL,
  n_5xx     bigint NOT NULL,
  n_ws_ok   bigint NOT NULL,
  n_ws_err  bigint NOT NULL,
  n_other   bigint NOT NULL,
  PRIMARY KEY (app_id, bucket)
);

-- Covering key: the 180-day queries become index-only scans of about 17k entries per app.
CREATE TABLE request_rollup_15m (
  app_id    text NOT NULL,
  bucket    timestamptz NOT NULL,
  n_total   bigint NOT NULL,
  n_2xx     bigint NOT NULL,
  n_4xx     bigint NOT NULL,
  n_5xx     bigint NOT NULL,
  n_ws_ok   bigint NOT NULL,
  n_ws_err  bigint NOT NULL,
  n_other   bigint NOT NULL,
  PRIMARY KEY (app_id, bucket) INCLUDE (n_total, n_2xx, n_4xx, n_5xx, n_ws_ok, n_ws_err, n_other)
);

CREATE TABLE cost_rollup_1m (
  app_id           text NOT NULL,
  bucket           timestamptz NOT NULL,
  n_events         bigint NOT NULL,
  running_time_ms  bigint NOT NULL,
  gpu_ucents       bigint NOT NULL,
  cpu_ucents       bigint NOT NULL,
  mem_ucents       bigint NOT NULL,
  PRIMARY KEY (app_id, bucket)
);

CREATE TABLE cost_rollup_15m (
  app_id           text NOT NULL,
  bucket           timestamptz NOT NULL,
  n_events         bigint NOT NULL,
  running_time_ms  bigint NOT NULL,
  gpu_ucents       bigint NOT NULL,
  cpu_ucents       bigint NOT NULL,
  mem_ucents       bigint NOT NULL,
  PRIMARY KEY (app_id, bucket) INCLUDE (running_time_ms, gpu_ucents, cpu_ucents, mem_ucents)
);
