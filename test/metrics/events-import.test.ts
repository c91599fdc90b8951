import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Command } from 'commander';
import pg from 'pg';
import { useTestPool } from '../helpers/test-pool.js';
import { EventsImportError, importEventsFile, registerEventsCommands } from '../../cli/events-import.js';
import { queryDashboardBuckets } from '../../db/metrics/dashboard-query.js';

const t = useTestPool();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-import-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, lines: unknown[]): Promise<string> {
  const p = path.join(dir, name);
  await writeFile(p, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return p;
}

const count = async () => (await t.pool.query('SELECT (SELECT count(*) FROM request_events)::int + (SELECT count(*) FROM cost_events)::int AS n')).rows[0].n;

describe('events import', () => {
  it('loads a good file, rollups included, and prints the count', async () => {
    const ts = '2026-11-20T10:00:00Z';
    const p = await file('good.ndjson', [
      { type: 'request', app_id: 'p-echo', ts, status: 200 },
      { type: 'request', app_id: 'p-echo', ts: '2026-11-20T10:00:59.999+00:00' },
      { type: 'request', app_id: 'p-echo', ts, status: 101, websocket_close_code: 1001 },
      { type: 'request', app_id: 'p-echo', ts, status: 500, async: true },
      '',
      { type: 'cost', app_id: 'p-echo', ts, running_time_ms: 1200, cpu_cost_cents: 0.01, memory_cost_cents: 0.002, gpu_cost_cents: 0 },
      { type: 'cost', app_id: 'p-echo', ts: '2026-11-20T05:00:30-05:00', running_time_ms: 1, cpu_cost_cents: 0.000001, memory_cost_cents: 0, gpu_cost_cents: 12.345678 },
    ]);
    const out: string[] = [];
    const program = new Command().exitOverride();
    registerEventsCommands(program, () => t.pool, (l) => out.push(l));
    await program.parseAsync(['events', 'import', p], { from: 'user' });
    expect(out).toEqual(['loaded 6 events (4 requests, 2 costs)']);
    const rows = await queryDashboardBuckets(t.pool, { appId: 'p-echo', start: new Date('2026-11-20T10:00:00Z'), end: new Date('2026-11-20T10:01:00Z'), interval: 'minute', tz: 'UTC' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ n_total: 4n, n_2xx: 1n, n_5xx: 1n, n_ws_ok: 1n, n_other: 1n, running_time_ms: 1201n, cpu_ucents: 10001n, mem_ucents: 2000n, gpu_ucents: 12345678n });
  });

  it('rejects a file with bad lines by line number and loads none of it', async () => {
    const before = await count();
    const ok = { type: 'request', app_id: 'p-echo', ts: '2026-11-20T10:00:00Z', status: 200 };
    const p = await file('bad.ndjson', [
      ok,
      '{"type":"request"',
      { ...ok, status: 99 },
      ok,
      { ...ok, ts: '2026-11-20 10:00:00' },
      { type: 'cost', app_id: 'p-echo', ts: ok.ts, running_time_ms: 1, cpu_cost_cents: -1, memory_cost_cents: 0, gpu_cost_cents: 0 },
      { type: 'cost', app_id: 'p-echo', ts: ok.ts, cpu_cost_cents: 1, memory_cost_cents: 0, gpu_cost_cents: 0 },
      { ...ok, type: 'click' },
      { ...ok, stauts: 200 },
      { ...ok, websocket_close_code: 999 },
      { ...ok, async: 'yes' },
      { ...ok, app_id: '' },
      '[1,2]',
      ok,
    ]);
    const err = await importEventsFile(t.pool, p).catch((e) => e);
    expect(err).toBeInstanceOf(EventsImportError);
    const msg = (err as Error).message;
    expect(msg).toMatch(/11 bad lines, nothing loaded/);
    for (const [line, what] of [[2, 'not valid JSON'], [3, 'status: must be an integer from 100 to 599'], [5, 'ts: must be an RFC 3339'], [6, 'cpu_cost_cents'],
      [7, 'running_time_ms: required'], [8, 'type: must be'], [9, 'unknown field "stauts"'], [10, 'websocket_close_code'], [11, 'async'], [12, 'app_id'], [13, 'must be a JSON object']] as const) {
      expect(msg).toContain(`line ${line}: ${what}`);
    }
    expect(msg).not.toMatch(/line (1|4|14):/);
    expect(await count()).toBe(before);
  });

  it('loads 100k events in one go, fast', async () => {
    const lines: string[] = [];
    const t0 = Date.parse('2026-10-01T00:00:00Z');
    for (let i = 0; i < 100_000; i++) {
      const ts = new Date(t0 + i * 7_777).toISOString();
      lines.push(i % 3 === 0
        ? JSON.stringify({ type: 'cost', app_id: `bulk-${i % 7}`, ts, running_time_ms: i % 5000, cpu_cost_cents: 0.0131, memory_cost_cents: 0.00444, gpu_cost_cents: 0.612 })
        : JSON.stringify({ type: 'request', app_id: `bulk-${i % 7}`, ts, status: 200 + (i % 4) * 100 }));
    }
    const p = path.join(dir, 'bulk.ndjson');
    await writeFile(p, lines.join('\n'));
    const started = performance.now();
    const r = await importEventsFile(t.pool, p);
    const secs = (performance.now() - started) / 1000;
    expect(r.loaded).toBe(100_000);
    console.log(`events import: 100k events in ${secs.toFixed(2)} s (${Math.round(100_000 / secs)} events/s)`);
    const totals = await t.pool.query("SELECT sum(n_total)::int AS n FROM request_rollup_15m WHERE app_id LIKE 'bulk-%'");
    expect(totals.rows[0].n).toBe(66_666);
  });

  it('reports a missing file', async () => {
    await expect(importEventsFile(t.pool, path.join(dir, 'nope.ndjson'))).rejects.toThrow(/cannot read/);
  });
});
