import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { Agent, request } from 'undici';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../config/config.js';
import { ensureDatabase, migrate } from '../db/migrate.js';
import { buildApp } from '../api/app.js';
import { serviceAccountsRepository } from '../db/repositories/service-accounts.js';
import { insertCostEvents, insertRequestEvents } from '../db/metrics/insert-events.js';
import type { CostEvent, RequestEvent } from '../db/metrics/event-types.js';
import { queryDashboardBuckets } from '../db/metrics/dashboard-query.js';
import { toDashboardMetrics } from '../db/metrics/dashboard-response.js';
import { parsePeriod } from '../db/metrics/period.js';
import { EventRecorder } from '../db/metrics/event-recorder.js';

// `npm run bench metrics [-- --events N] [--runs N] [--keep]`: loads N events (default 20M) over 180
// days for 100 apps with a skew into a fresh database, then measures the dashboard endpoint over HTTP
// (auth, validation, query, serialisation) on the heaviest app, next to the same answer computed from
// the raw events, and checks both answers are equal. Results go to bench/results/metrics-*.json.

export interface MetricsBenchOptions {
  events?: number;
  apps?: number;
  runs?: number;
  rawRuns?: number;
  writers?: number;
  keep?: boolean;
  adminUrl?: string;
  log?: (line: string) => void;
}

const D = 86_400_000;
const BATCH = 10_000;
const PROJECT = 'bench';
const appId = (i: number) => `bench-a${String(i).padStart(3, '0')}`;

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATUSES = [200, 200, 200, 200, 200, 200, 201, 204, 404, 400, 500, 503, 302, null];

/** Batch `b` of the synthetic stream: time-ordered, 3 requests to 1 cost, app = 1 + floor(apps * r^2). */
function batch(b: number, total: number, apps: number, from: number, span: number): { requests: RequestEvent[]; costs: CostEvent[] } {
  const rnd = prng(1000 + b);
  const requests: RequestEvent[] = [];
  const costs: CostEvent[] = [];
  const end = Math.min(total, (b + 1) * BATCH);
  for (let i = b * BATCH; i < end; i++) {
    const ts = new Date(from + Math.floor((i / total) * span));
    const app = appId(1 + Math.floor(apps * rnd() ** 2));
    if (i % 4 === 3) {
      const ms = Math.floor(rnd() * 3000);
      costs.push({ ts, appId: app, runningTimeMs: ms, cpuUcents: BigInt(ms * 655), memoryUcents: BigInt(ms * 444), gpuUcents: rnd() < 0.3 ? BigInt(ms * 30_600) : 0n });
    } else if (rnd() < 0.05) {
      requests.push({ ts, appId: app, status: 101, wsCloseCode: rnd() < 0.8 ? 1000 : 1006, async: false });
    } else {
      requests.push({ ts, appId: app, status: STATUSES[Math.floor(rnd() * STATUSES.length)], async: rnd() < 0.1 });
    }
  }
  return { requests, costs };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const round = (x: number) => Math.round(x * 100) / 100;

export async function runMetricsBench(opts: MetricsBenchOptions = {}) {
  const log = opts.log ?? ((l: string) => console.log(l));
  const total = opts.events ?? 20_000_000;
  const apps = opts.apps ?? 100;
  const runs = opts.runs ?? 200;
  const rawRuns = opts.rawRuns ?? 5;
  const writers = opts.writers ?? 2;
  const admin = new URL(opts.adminUrl ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const dbName = `runhook_bench_${randomBytes(4).toString('hex')}`;
  const url = new URL(admin);
  url.pathname = `/${dbName}`;
  await ensureDatabase(url.toString());
  const { backend } = await migrate(url.toString());
  log(`bench database ${dbName} (${backend}); loading ${total.toLocaleString()} events over 180 days for ${apps} apps`);
  const pool = new pg.Pool({ connectionString: url.toString(), max: writers + 2 });
  const result: Record<string, unknown> = {
    when: new Date().toISOString(), host: { cpus: os.cpus().length, memGb: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    backend, events: total, apps,
  };
  let api: Awaited<ReturnType<typeof buildApp>> | undefined;
  const agent = new Agent({ keepAliveTimeout: 60_000, connections: 4 });
  try {
    const server = (await pool.query("SELECT version() AS v, current_setting('shared_buffers') AS sb")).rows[0];
    result.postgres = { version: server.v, shared_buffers: server.sb };
    for (let i = 1; i <= apps; i++) {
      await pool.query(`INSERT INTO apps (app_id, project_id, name, url, cpu, memory_gb, compute, gpu_count, response_grace_period)
        VALUES ($1, $2, $3, 'http://127.0.0.1:9/', 1, 1, 'CPU', 0, 900)`, [appId(i), PROJECT, appId(i).slice(PROJECT.length + 1)]);
    }

    // Ingest: time-ordered batches of 10k through the same insert path the recorder and the importer
    // use (on plain PostgreSQL it also upserts the 1m and 15m rollups in the same statement).
    const now = Date.now();
    const from = now - 180 * D + 60_000;
    const span = now - from;
    const batches = Math.ceil(total / BATCH);
    let next = 0;
    let done = 0;
    const started = performance.now();
    let lastLog = started;
    await Promise.all(Array.from({ length: writers }, async () => {
      for (;;) {
        const b = next++;
        if (b >= batches) return;
        const { requests, costs } = batch(b, total, apps, from, span);
        await insertRequestEvents(pool, requests);
        await insertCostEvents(pool, costs);
        done += requests.length + costs.length;
        if (performance.now() - lastLog > 10_000) {
          lastLog = performance.now();
          log(`  ${done.toLocaleString()} events, ${Math.round(done / ((lastLog - started) / 1000)).toLocaleString()} events/s`);
        }
      }
    }));
    const ingestSecs = (performance.now() - started) / 1000;
    result.ingest = { events: done, seconds: round(ingestSecs), eventsPerSecond: Math.round(done / ingestSecs), writers, batchRows: BATCH, includesRollupUpserts: backend === 'postgres' };
    log(`ingest: ${done.toLocaleString()} events in ${ingestSecs.toFixed(1)} s = ${Math.round(done / ingestSecs).toLocaleString()} events/s (${writers} writers, rollups upserted in the same statements)`);
    const v0 = performance.now();
    await pool.query('VACUUM ANALYZE');
    result.vacuumAnalyzeSeconds = round((performance.now() - v0) / 1000);
    const sizes = await pool.query(`SELECT relname, pg_total_relation_size(oid) AS bytes FROM pg_class
      WHERE relname IN ('request_events','cost_events','request_rollup_1m','request_rollup_15m','cost_rollup_1m','cost_rollup_15m')`);
    result.sizesMb = Object.fromEntries(sizes.rows.map((r) => [r.relname, Math.round(Number(r.bytes) / 2 ** 20)]));

    const heaviest = (await pool.query('SELECT app_id, sum(n_total)::bigint AS n FROM request_rollup_15m GROUP BY 1 ORDER BY 2 DESC LIMIT 1')).rows[0];
    result.heaviestApp = { appId: heaviest.app_id, requests: Number(heaviest.n) };
    log(`heaviest app ${heaviest.app_id}: ${Number(heaviest.n).toLocaleString()} requests`);

    // The real API: auth plugin, validation, route, serialisation. Temporal is never called here.
    const config = loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' });
    const temporal = new Client({ connection: Connection.lazy({ address: config.temporalAddress }) });
    api = await buildApp({ config, pool, temporal });
    await api.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
    const token = (await serviceAccountsRepository(pool).create(PROJECT, 'bench', null)).token;

    const t = Date.now();
    const cases = [
      { name: '180 d by day, America/New_York', query: { start: new Date(t - 179 * D - D / 2).toISOString(), end: new Date(t + D / 2).toISOString(), interval: 'day', tz: 'America/New_York' } },
      { name: '7 d by hour, Asia/Kolkata', query: { start: new Date(t - 7 * D).toISOString(), end: new Date(t).toISOString(), interval: 'hour', tz: 'Asia/Kolkata' } },
      { name: '6 h by minute, Asia/Kathmandu', query: { start: new Date(t - 6 * 3_600_000).toISOString(), end: new Date(t).toISOString(), interval: 'minute', tz: 'Asia/Kathmandu' } },
      { name: '180 d by month, America/New_York', query: { start: new Date(t - 179 * D - D / 2).toISOString(), end: new Date(t + D / 2).toISOString(), interval: 'month', tz: 'America/New_York' } },
    ];
    const out = [];
    for (const c of cases) {
      const urlPath = `${base}/v2/projects/${PROJECT}/apps/${heaviest.app_id}/dashboard-metrics?${new URLSearchParams(c.query)}`;
      const times: number[] = [];
      let body = '';
      for (let i = 0; i < runs + 5; i++) {
        const s = performance.now();
        const res = await request(urlPath, { dispatcher: agent, headers: { authorization: `Bearer ${token}` } });
        body = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`${c.name}: HTTP ${res.statusCode} ${body}`);
        if (i >= 5) times.push(performance.now() - s);
      }
      times.sort((a, b) => a - b);
      // The same answer from raw events (no rollups), formatted by the same code, must be identical.
      const period = parsePeriod(c.query);
      const rawTimes: number[] = [];
      let rawBody = '';
      for (let i = 0; i < rawRuns; i++) {
        const s = performance.now();
        const rows = await queryDashboardBuckets(pool, { appId: heaviest.app_id, start: period.start, end: period.end, interval: period.interval, tz: period.tz }, { fromRaw: true });
        rawBody = JSON.stringify(toDashboardMetrics(rows, period));
        rawTimes.push(performance.now() - s);
      }
      rawTimes.sort((a, b) => a - b);
      const match = JSON.stringify(JSON.parse(body)) === rawBody;
      const buckets = Object.keys(JSON.parse(body).requests).length;
      const r = {
        case: c.name, buckets, runs,
        endpointHttpMs: { p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), max: round(times[times.length - 1]) },
        rawSqlMs: { p50: round(percentile(rawTimes, 50)), max: round(rawTimes[rawTimes.length - 1]), runs: rawRuns },
        answersMatch: match,
      };
      out.push(r);
      log(`${c.name.padEnd(34)} ${String(buckets).padStart(4)} buckets  endpoint p50 ${r.endpointHttpMs.p50} ms p99 ${r.endpointHttpMs.p99} ms | from raw p50 ${r.rawSqlMs.p50} ms | ${match ? 'same answer' : 'ANSWERS DIFFER'}`);
      if (!match) throw new Error(`${c.name}: the endpoint and the raw-event answer differ`);
    }
    result.queries = out;

    // What recording costs the caller of /run: recordRequest only appends to memory.
    const rec = new EventRecorder(pool, { flushIntervalMs: 200 });
    const n = 200_000;
    const s = performance.now();
    for (let i = 0; i < n; i++) rec.recordRequest({ ts: new Date(), appId: appId(1), status: 200, async: false });
    const perCallNs = ((performance.now() - s) * 1e6) / n;
    await rec.close();
    result.recorder = { calls: n, nsPerRecordRequest: Math.round(perCallNs), ...rec.stats() };
    log(`recorder: ${Math.round(perCallNs)} ns per recordRequest call; stats ${JSON.stringify(rec.stats())}`);
  } finally {
    await api?.close();
    await agent.close();
    await pool.end();
    if (!opts.keep) {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(dbName)} WITH (FORCE)`);
      await c.end();
    }
  }
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `metrics-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, JSON.stringify(result, null, 2) + '\n');
  log(`results written to ${path.relative(process.cwd(), file)}`);
  return result;
}

/** argv after `metrics`: --events N, --apps N, --runs N, --raw-runs N, --writers N, --keep. */
export function parseMetricsBenchArgs(argv: string[]): MetricsBenchOptions {
  const o: MetricsBenchOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(String(argv[++i]).replace(/_/g, ''));
      if (!Number.isInteger(v) || v <= 0) throw new Error(`${a}: expected a positive whole number`);
      return v;
    };
    if (a === '--events') o.events = num();
    else if (a === '--apps') o.apps = num();
    else if (a === '--runs') o.runs = num();
    else if (a === '--raw-runs') o.rawRuns = num();
    else if (a === '--writers') o.writers = num();
    else if (a === '--keep') o.keep = true;
    else throw new Error(`unknown option ${a}; options: --events N --apps N --runs N --raw-runs N --writers N --keep`);
  }
  return o;
}
