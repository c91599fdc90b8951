-- Plain PostgreSQL only. The (app_id, ts) btrees on the raw event tables cost about a third of
-- PostgreSQL's CPU per recorded run (measured: 6.3-6.8 vs 4.5 µs per request+cost pair at 2,500 a
-- batch), yet nothing on the serving path reads raw events: the endpoint reads the rollups, and
-- only the raw reference query (tests, `npm run bench metrics`) and operators' ad-hoc queries scan
-- them. A BRIN index on ts, tiny and nearly free to maintain because events arrive in time order,
-- keeps time-range scans (and any DELETE by age) cheap; per-app raw queries filter inside that range.
-- TimescaleDB keeps its btrees: chunks bound each index, and compression would replace them.
DROP INDEX IF EXISTS request_events_app_ts;
DROP INDEX IF EXISTS cost_events_app_ts;
CREATE INDEX request_events_ts_brin ON request_events USING brin (ts);
CREATE INDEX cost_events_ts_brin ON cost_events USING brin (ts);
