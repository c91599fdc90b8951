-- Service accounts: the token itself is never stored, only its SHA-256.
CREATE TABLE service_accounts (
  id          bigserial PRIMARY KEY,
  project_id  text NOT NULL,
  name        text NOT NULL,
  token_hash  bytea NOT NULL UNIQUE,
  token_hint  text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz,
  revoked_at  timestamptz
);
CREATE INDEX service_accounts_project ON service_accounts (project_id);

CREATE TABLE apps (
  app_id                 text PRIMARY KEY,
  project_id             text NOT NULL,
  name                   text NOT NULL,
  url                    text NOT NULL,
  cpu                    double precision NOT NULL,
  memory_gb              double precision NOT NULL,
  compute                text NOT NULL,
  gpu_count              integer NOT NULL,
  response_grace_period  integer NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

-- One row per run, sync or async; the workflow id of an async run is its run_id.
CREATE TABLE runs (
  run_id            text PRIMARY KEY,
  app_id            text NOT NULL,
  project_id        text NOT NULL,
  app_name          text NOT NULL,
  async             boolean NOT NULL,
  status            text NOT NULL CHECK (status IN ('queued','running','succeeded','failure','cancelled','timed_out')),
  created_at        timestamptz NOT NULL DEFAULT now(),
  started_at        timestamptz,
  finished_at       timestamptz,
  run_time_ms       integer,
  status_code       integer,
  error             text,
  webhook_endpoint  text
);
CREATE INDEX runs_app_created ON runs (app_id, created_at DESC, run_id DESC);

-- Request and response bodies stay here, never in Temporal history (claim check by run_id).
CREATE TABLE run_payloads (
  run_id        text NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('request','response')),
  content_type  text,
  body          bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, kind)
);
