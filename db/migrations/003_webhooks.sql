-- One row per delivery of a run's webhook: delivery 0 is the one the run request asked for, 1.. are
-- redeliveries. The delivery workflow id is webhook-<run_id> (0) or webhook-<run_id>-<n>.
CREATE TABLE webhook_deliveries (
  run_id               text NOT NULL,
  delivery             integer NOT NULL CHECK (delivery >= 0),
  endpoint             text NOT NULL,
  -- AES-256-GCM with PAYLOAD_CODEC_KEY (lib/webhook-secret-box.ts); never the plaintext. NULL: unsigned.
  secret_sealed        bytea,
  state                text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','delivered','failed')),
  created_at           timestamptz NOT NULL DEFAULT now(),
  -- Outbox marker: set once the delivery workflow is known to exist; NULL rows are re-driven.
  workflow_started_at  timestamptz,
  finished_at          timestamptz,
  error                text,
  PRIMARY KEY (run_id, delivery)
);
CREATE INDEX webhook_deliveries_unstarted ON webhook_deliveries (created_at) WHERE workflow_started_at IS NULL;

CREATE TABLE webhook_attempts (
  run_id       text NOT NULL,
  delivery     integer NOT NULL,
  attempt      integer NOT NULL CHECK (attempt >= 1),
  started_at   timestamptz NOT NULL,
  duration_ms  integer NOT NULL,
  status_code  integer,
  error        text,
  -- delivered (2xx), retry (network error, timeout, 404, 1xx/3xx) or rejected (other 4xx, 5xx).
  outcome      text NOT NULL CHECK (outcome IN ('delivered','retry','rejected')),
  PRIMARY KEY (run_id, delivery, attempt),
  FOREIGN KEY (run_id, delivery) REFERENCES webhook_deliveries (run_id, delivery) ON DELETE CASCADE
);
