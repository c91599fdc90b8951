import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { useTestPool } from '../helpers/test-pool.js';
import { EventRecorder } from '../../db/metrics/event-recorder.js';
import { insertCostEvents, insertRequestEvents } from '../../db/metrics/insert-events.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { costAt, prng, requestAt } from './helpers/event-data.js';

const t = useTestPool();

async function counts(p: pg.Pool = t.pool) {
  const { rows } = await p.query(`SELECT (SELECT count(*) FROM request_events)::int AS raw_requests,
    (SELECT count(*) FROM cost_events)::int AS raw_costs,
    (SELECT coalesce(sum(n_total), 0) FROM request_rollup_15m)::int AS rolled_requests,
    (SELECT coalesce(sum(n_events), 0) FROM cost_rollup_1m)::int AS rolled_costs`);
  return rows[0];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pool on the test database that counts the statements sent through it. */
function countingPool(): { pool: pg.Pool; statements: () => number } {
  let n = 0;
  const counting = new pg.Pool({ connectionString: t.db.url, max: 2 });
  const q = counting.query.bind(counting);
  (counting as unknown as { query: unknown }).query = (...args: unknown[]) => {
    n++;
    return (q as (...a: unknown[]) => unknown)(...args);
  };
  return { pool: counting, statements: () => n };
}

describe('EventRecorder', () => {
  it('returns at once, batches in the background, flushes on close; rollups stay current; nothing dropped', async () => {
    await t.pool.query('TRUNCATE request_events, cost_events, request_rollup_1m, request_rollup_15m, cost_rollup_1m, cost_rollup_15m');
    const { pool: counting, statements } = countingPool();
    const rec = new EventRecorder(counting, { flushIntervalMs: 50, batchSize: 1000 });
    const rnd = prng(3);
    const t0 = performance.now();
    for (let i = 0; i < 2500; i++) {
      rec.recordRequest(requestAt(Date.now() - i * 1000, 'app-a', rnd));
      if (i % 5 === 0) rec.recordCost(costAt(Date.now() - i * 1000, 'app-a', rnd));
    }
    const elapsed = performance.now() - t0;
    expect(elapsed).toBeLessThan(200);
    expect(rec.stats().buffered).toBe(3000);
    await sleep(400);
    expect(rec.stats()).toEqual({ buffered: 0, dropped: 0, written: 3000, rejected: 0 });
    // Batched: a handful of statements (plus one schema probe), not 3000.
    expect(statements()).toBeLessThan(12);
    for (let i = 0; i < 7; i++) rec.recordRequest(requestAt(Date.now(), 'app-a', rnd));
    await rec.close();
    expect(rec.stats()).toEqual({ buffered: 0, dropped: 0, written: 3007, rejected: 0 });
    expect(await counts()).toEqual({ raw_requests: 2507, raw_costs: 500, rolled_requests: 2507, rolled_costs: 500 });
    await counting.end();
  });

  it('under steady load writes one batch per interval, not a small batch after every write', async () => {
    await t.pool.query('TRUNCATE request_events, cost_events, request_rollup_1m, request_rollup_15m, cost_rollup_1m, cost_rollup_15m');
    const { pool: counting, statements } = countingPool();
    const intervalMs = 250;
    const rec = new EventRecorder(counting, { flushIntervalMs: intervalMs });
    const rnd = prng(5);
    let recorded = 0;
    const t0 = performance.now();
    // A run every millisecond or so for 1.5 s: events keep arriving while each write is in flight.
    while (performance.now() - t0 < 1_500) {
      rec.recordRequest(requestAt(Date.now(), 'app-steady', rnd));
      rec.recordCost(costAt(Date.now(), 'app-steady', rnd));
      recorded += 2;
      await sleep(1);
    }
    const ticks = (performance.now() - t0) / intervalMs;
    await rec.close();
    expect(rec.stats()).toEqual({ buffered: 0, dropped: 0, written: recorded, rejected: 0 });
    // Two statements (requests, costs) per tick, the schema probe and the final flush. Draining until
    // empty instead wrote a few rows per statement, back to back: hundreds of statements here.
    expect(statements()).toBeLessThanOrEqual(2 * (Math.ceil(ticks) + 1) + 1);
    expect(await counts()).toMatchObject({ raw_requests: recorded / 2, raw_costs: recorded / 2, rolled_requests: recorded / 2 });
    await counting.end();
  });

  it('keeps retrying while PostgreSQL is unreachable and writes everything once it is back', async () => {
    await t.pool.query('TRUNCATE request_events, cost_events, request_rollup_1m, request_rollup_15m, cost_rollup_1m, cost_rollup_15m');
    const proxy = new TcpProxy({ host: '127.0.0.1', port: Number(new URL(t.db.url).port || 5432) });
    await proxy.start();
    const url = new URL(t.db.url);
    url.port = String(proxy.port);
    const viaProxy = new pg.Pool({ connectionString: url.toString(), max: 2, connectionTimeoutMillis: 1000 });
    viaProxy.on('error', () => {});
    const errors: string[] = [];
    const rec = new EventRecorder(viaProxy, { flushIntervalMs: 20, retryDelayMs: 20, maxRetryDelayMs: 100, onError: (e) => errors.push(e.message) });
    const rnd = prng(5);
    rec.recordRequest(requestAt(Date.now(), 'app-b', rnd));
    await rec.flush();
    await proxy.cut();
    for (let i = 0; i < 500; i++) {
      rec.recordRequest(requestAt(Date.now() - i, 'app-b', rnd));
      rec.recordCost(costAt(Date.now() - i, 'app-b', rnd));
    }
    await sleep(700);
    expect(errors.length).toBeGreaterThan(2);
    expect(rec.stats()).toEqual({ buffered: 1000, dropped: 0, written: 1, rejected: 0 });
    await proxy.restore();
    // close() waits for PostgreSQL to come back rather than give up.
    await rec.close(20_000);
    expect(rec.stats()).toEqual({ buffered: 0, dropped: 0, written: 1001, rejected: 0 });
    expect(await counts()).toEqual({ raw_requests: 501, raw_costs: 500, rolled_requests: 501, rolled_costs: 500 });
    await viaProxy.end();
    await proxy.cut();
  });

  it('counts events beyond the memory bound as dropped, and only those', async () => {
    const proxy = new TcpProxy({ host: '127.0.0.1', port: 5432 });
    await proxy.start();
    await proxy.cut(); // nothing listens: every write fails
    const dead = new pg.Pool({ host: '127.0.0.1', port: proxy.port, user: 'postgres', database: t.db.name, connectionTimeoutMillis: 200 });
    dead.on('error', () => {});
    const rec = new EventRecorder(dead, { maxBuffered: 100, flushIntervalMs: 10, retryDelayMs: 10 });
    const rnd = prng(6);
    for (let i = 0; i < 130; i++) rec.recordRequest(requestAt(Date.now(), 'app-c', rnd));
    expect(rec.stats()).toEqual({ buffered: 100, dropped: 30, written: 0, rejected: 0 });
    await expect(rec.close(300)).rejects.toThrow(/100 events not written/);
    await dead.end();
  });

  it('stores every column exactly: millisecond times (before 1970 too), nulls, many apps, big micro-cent values', async () => {
    await t.pool.query('TRUNCATE request_events, cost_events, request_rollup_1m, request_rollup_15m, cost_rollup_1m, cost_rollup_15m');
    const times = ['2026-03-08T06:59:59.999Z', '1969-12-31T23:59:59.001Z', '2026-11-01T05:00:00.000Z'].map((t) => new Date(t));
    await insertRequestEvents(t.pool, [
      { ts: times[0], appId: 'p-a', status: 200, async: false },
      { ts: times[1], appId: 'p-b', status: null, wsCloseCode: 1001, async: true },
      { ts: times[2], appId: 'p-a', status: null, async: false },
    ]);
    await insertCostEvents(t.pool, [
      { ts: times[0], appId: 'p-b', runningTimeMs: 1234.6, gpuUcents: 9_007_199_254_740_993n, cpuUcents: 0n, memoryUcents: 7n },
      { ts: times[2], appId: 'p-a', runningTimeMs: 0, gpuUcents: 0n, cpuUcents: 5n, memoryUcents: 0n },
    ]);
    const { rows: requests } = await t.pool.query('SELECT ts, app_id, status, ws_close_code, async FROM request_events ORDER BY ts');
    expect(requests).toEqual([
      { ts: times[1], app_id: 'p-b', status: null, ws_close_code: 1001, async: true },
      { ts: times[0], app_id: 'p-a', status: 200, ws_close_code: null, async: false },
      { ts: times[2], app_id: 'p-a', status: null, ws_close_code: null, async: false },
    ]);
    const { rows: costs } = await t.pool.query('SELECT ts, app_id, running_time_ms::text, gpu_ucents::text, cpu_ucents::text, mem_ucents::text FROM cost_events ORDER BY ts');
    expect(costs).toEqual([
      { ts: times[0], app_id: 'p-b', running_time_ms: '1235', gpu_ucents: '9007199254740993', cpu_ucents: '0', mem_ucents: '7' },
      { ts: times[2], app_id: 'p-a', running_time_ms: '0', gpu_ucents: '0', cpu_ucents: '5', mem_ucents: '0' },
    ]);
  });

  it('refuses at record time an event PostgreSQL could never store, so it cannot block the good ones behind it', async () => {
    await t.pool.query('TRUNCATE request_events, cost_events, request_rollup_1m, request_rollup_15m, cost_rollup_1m, cost_rollup_15m');
    const reasons: string[] = [];
    const rec = new EventRecorder(t.pool, { flushIntervalMs: 20, onRejected: (r) => reasons.push(r) });
    const now = new Date();
    rec.recordRequest({ ts: new Date(Number.NaN), appId: 'app-d', status: 200, async: false });
    rec.recordRequest({ ts: now, appId: 'app-d', status: 200.5, async: false });
    rec.recordCost({ ts: now, appId: 'app-d', runningTimeMs: Number.POSITIVE_INFINITY, gpuUcents: 0n, cpuUcents: 1n, memoryUcents: 1n });
    rec.recordRequest({ ts: now, appId: 'app-d', status: 200, async: false });
    rec.recordCost({ ts: now, appId: 'app-d', runningTimeMs: 12, gpuUcents: 0n, cpuUcents: 1n, memoryUcents: 1n });
    await rec.close();
    expect(rec.stats()).toEqual({ buffered: 0, dropped: 0, written: 2, rejected: 3 });
    expect(reasons).toEqual(['request event without a valid time', 'request event with status 200.5', 'cost event with running time Infinity']);
    expect(await counts()).toEqual({ raw_requests: 1, raw_costs: 1, rolled_requests: 1, rolled_costs: 1 });
  });
});
