import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import pg from 'pg';
import { migrate } from '../../db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { insertCostEvents, insertRequestEvents, refreshRollups } from '../../db/metrics/insert-events.js';
import { queryDashboardBuckets } from '../../db/metrics/dashboard-query.js';
import dashboardMetricsRoute from '../../api/routes/dashboard-metrics.js';
import { importEventsFile } from '../../cli/events-import.js';
import { makeEvents } from './helpers/event-data.js';
import { findTransition } from './helpers/bucket-oracle.js';
import { startPgliteTimescale, type PgliteTimescale } from './helpers/pglite-timescaledb.js';

// The TimescaleDB migration and the dashboard query on the PGlite TimescaleDB build, checked against
// plain PostgreSQL loaded with the same events: both backends must give identical answers.

const H = 3_600_000;
const D = 24 * H;
const now = Date.now();
const FROM = now - 170 * D;
const TO = now + 150 * D;
const APP = 'pt-app';
// The PGlite build crashes (WASM "unreachable") on protocol messages over about 64 KB.
const PGLITE_ROWS = 500;

let tsdb: PgliteTimescale;
let tsPool: pg.Pool;
let plain: TestDatabase;
let pgPool: pg.Pool;
const apis: FastifyInstance[] = [];
let dir: string;

async function api(pool: pg.Pool): Promise<FastifyInstance> {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>();
  app.decorate('pg', pool);
  await app.register(dashboardMetricsRoute);
  await app.ready();
  apis.push(app);
  return app;
}

const refreshAll = async (pool: pg.Pool) => {
  for (const v of ['request_rollup_1m', 'cost_rollup_1m', 'request_rollup_15m', 'cost_rollup_15m']) {
    await pool.query(`CALL refresh_continuous_aggregate('${v}', NULL, NULL)`);
  }
};

const hotspots: number[] = [];
for (const zone of ['America/New_York', 'Australia/Lord_Howe', 'Europe/Berlin']) {
  let from = new Date(FROM);
  for (;;) {
    const t = findTransition(zone, from, 400);
    if (t.at >= TO) break;
    hotspots.push(t.at);
    from = new Date(t.at + 15 * 60_000);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-tsdb-'));
  [tsdb, plain] = await Promise.all([startPgliteTimescale(), createTestDatabase()]);
  const result = await migrate(tsdb.url);
  expect(result.backend).toBe('timescaledb');
  expect(result.applied).toContain('002_events.timescaledb.sql');
  tsPool = new pg.Pool({ connectionString: tsdb.url, max: 1 });
  pgPool = new pg.Pool({ connectionString: plain.url, max: 2 });
  const { requests, costs } = makeEvents({ appId: APP, from: FROM, to: TO, n: 6_000, hotspots, seed: 11 });
  for (const pool of [tsPool, pgPool]) {
    await pool.query("INSERT INTO apps (app_id, project_id, name, url, cpu, memory_gb, compute, gpu_count, response_grace_period) VALUES ($1, 'pt', 'app', 'http://127.0.0.1:9', 1, 1, 'CPU', 0, 900)", [APP]);
    await insertRequestEvents(pool, requests, { batchRows: PGLITE_ROWS });
    await insertCostEvents(pool, costs, { batchRows: PGLITE_ROWS });
  }
}, 180_000);

afterAll(async () => {
  // Each step on its own: a crashed WASM instance must not leave the PostgreSQL database behind.
  const steps = [...apis.map((a) => () => a.close()), () => tsPool?.end(), () => pgPool?.end(), () => tsdb?.stop(), () => plain?.drop(),
    () => rm(dir, { recursive: true, force: true })];
  for (const step of steps) await Promise.resolve().then(step).catch(() => {});
});

describe('TimescaleDB (PGlite build) against plain PostgreSQL', () => {
  it('migrates to hypertables and continuous aggregates with policies', async () => {
    const ht = await tsPool.query('SELECT hypertable_name FROM timescaledb_information.hypertables ORDER BY 1');
    expect(ht.rows.map((r) => r.hypertable_name)).toEqual(expect.arrayContaining(['cost_events', 'request_events']));
    const caggs = await tsPool.query('SELECT view_name, materialized_only FROM timescaledb_information.continuous_aggregates ORDER BY 1');
    expect(caggs.rows).toEqual([
      { view_name: 'cost_rollup_15m', materialized_only: false }, { view_name: 'cost_rollup_1m', materialized_only: false },
      { view_name: 'request_rollup_15m', materialized_only: false }, { view_name: 'request_rollup_1m', materialized_only: false },
    ]);
    const jobs = await tsPool.query("SELECT proc_name, count(*)::int AS n FROM timescaledb_information.jobs WHERE proc_name IN ('policy_refresh_continuous_aggregate', 'policy_retention') GROUP BY 1 ORDER BY 1");
    expect(jobs.rows).toEqual([{ proc_name: 'policy_refresh_continuous_aggregate', n: 4 }, { proc_name: 'policy_retention', n: 6 }]);
  });

  it('real-time aggregation: unrefreshed rows are already visible and equal plain PostgreSQL', async () => {
    const q = { appId: APP, start: new Date(now - 3 * D), end: new Date(now + 3 * D), interval: 'hour' as const, tz: 'Asia/Kolkata' };
    expect(await queryDashboardBuckets(tsPool, q)).toEqual(await queryDashboardBuckets(pgPool, q));
  });

  it('after a refresh, identical endpoint answers for zones, intervals and DST periods', async () => {
    await refreshAll(tsPool);
    const mat = await tsPool.query('SELECT count(*)::int AS n FROM _timescaledb_catalog.continuous_agg');
    expect(mat.rows[0].n).toBe(4);
    const [a, b] = [await api(tsPool), await api(pgPool)];
    const cases: Array<Record<string, string>> = [{}, { month: 'previous', interval: 'month', tz: 'America/New_York' }];
    for (const h of hotspots) {
      cases.push(
        { start: new Date(h - 12 * H).toISOString(), end: new Date(h + 36 * H).toISOString(), interval: 'hour', tz: 'America/New_York' },
        { start: new Date(h - 3 * H).toISOString(), end: new Date(h + 3 * H).toISOString(), interval: 'minute', tz: 'Australia/Lord_Howe' },
        { start: new Date(h - 2 * D).toISOString(), end: new Date(h + 5 * D).toISOString(), interval: 'hour', tz: 'Australia/Lord_Howe' },
        { start: new Date(h - 10 * D).toISOString(), end: new Date(h + 10 * D).toISOString(), interval: 'day', tz: 'Europe/Berlin' },
      );
    }
    cases.push(
      { start: new Date(FROM + D).toISOString(), end: new Date(FROM + 181 * D).toISOString(), interval: 'day', tz: 'America/New_York' },
      { start: new Date(FROM + D).toISOString(), end: new Date(FROM + 181 * D).toISOString(), interval: 'month', tz: 'Asia/Kathmandu' },
      { start: new Date(now - 7 * D).toISOString(), end: new Date(now).toISOString(), interval: 'hour', tz: 'Asia/Kolkata' },
    );
    let nonEmpty = 0;
    for (const query of cases) {
      const url = `/v2/projects/pt/apps/${APP}/dashboard-metrics?${new URLSearchParams(query)}`;
      const [ra, rb] = [await a.inject(url), await b.inject(url)];
      expect(ra.statusCode, ra.body).toBe(200);
      expect(ra.body).toBe(rb.body);
      if (JSON.parse(ra.body).request_totals.total > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(cases.length / 2);
    // The rollups on TimescaleDB equal the same answer computed from its raw hypertables.
    const q = { appId: APP, start: new Date(FROM + D), end: new Date(FROM + 181 * D), interval: 'day' as const, tz: 'America/New_York' };
    expect(await queryDashboardBuckets(tsPool, q)).toEqual(await queryDashboardBuckets(tsPool, q, { fromRaw: true }));
  });

  it('a backfill below the watermark is invisible until refreshed; events import refreshes it', async () => {
    const ts = new Date(now - 20 * D);
    const late = [{ ts, appId: APP, status: 200, async: false }];
    await insertRequestEvents(tsPool, late);
    await insertRequestEvents(pgPool, late);
    const q = { appId: APP, start: new Date(ts.getTime() - H), end: new Date(ts.getTime() + H), interval: 'hour' as const, tz: 'UTC' };
    const before = await queryDashboardBuckets(tsPool, q);
    const expected = await queryDashboardBuckets(pgPool, q);
    expect(before).not.toEqual(expected);
    await refreshRollups(tsPool, ts, ts);
    expect(await queryDashboardBuckets(tsPool, q)).toEqual(expected);

    const file = path.join(dir, 'backfill.ndjson');
    await writeFile(file, [
      { type: 'request', app_id: APP, ts: new Date(now - 30 * D).toISOString(), status: 503 },
      { type: 'request', app_id: APP, ts: new Date(now - 30 * D + 1).toISOString(), websocket_close_code: 1002 },
      { type: 'cost', app_id: APP, ts: new Date(now - 30 * D).toISOString(), running_time_ms: 10, cpu_cost_cents: 1.5, memory_cost_cents: 0.25, gpu_cost_cents: 3 },
    ].map((l) => JSON.stringify(l)).join('\n'));
    for (const pool of [tsPool, pgPool]) expect((await importEventsFile(pool, file, { batchRows: PGLITE_ROWS })).loaded).toBe(3);
    const q2 = { appId: APP, start: new Date(now - 31 * D), end: new Date(now - 29 * D), interval: 'day' as const, tz: 'America/New_York' };
    const [x, y] = [await queryDashboardBuckets(tsPool, q2), await queryDashboardBuckets(pgPool, q2)];
    expect(x).toEqual(y);
    expect(x.reduce((s, r) => s + r.n_5xx + r.n_ws_err, 0n)).toBeGreaterThanOrEqual(2n);
  });
});
