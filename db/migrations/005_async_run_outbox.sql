-- Async runs are accepted (202) once their row commits; the workflow is started right after, from
-- the row. start_spec is everything that start needs (no secrets), so any API process, or the
-- hourly retention workflow, can (re)start a run whose start did not happen (process killed,
-- Temporal down). workflow_started_at marks the start as confirmed.
ALTER TABLE runs ADD COLUMN start_spec jsonb, ADD COLUMN workflow_started_at timestamptz;
CREATE INDEX runs_unstarted ON runs (created_at) WHERE async AND workflow_started_at IS NULL AND finished_at IS NULL;
