-- Idempotency keys live here, not only in Temporal: closed workflows vanish after namespace retention.
CREATE TABLE idempotency_keys (
  app_id          text NOT NULL,
  key             text NOT NULL,
  request_sha256  bytea NOT NULL,
  run_id          text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, key)
);

-- Set when the stored request/response bodies were pruned by the retention schedule (result -> 410).
ALTER TABLE runs ADD COLUMN payloads_pruned_at timestamptz;
CREATE INDEX runs_app_status_created ON runs (app_id, status, created_at DESC, run_id DESC);
CREATE INDEX runs_finished_unpruned ON runs (finished_at) WHERE payloads_pruned_at IS NULL;
