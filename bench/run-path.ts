// Sync overhead and async accept, measured side by side in one run (issue: foundation benchmark).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { v7 as uuidv7 } from 'uuid';
import { loadConfig } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { appsRepository } from '../db/repositories/apps.js';
import { serviceAccountsRepository } from '../db/repositories/service-accounts.js';
import { createTemporalClient } from '../lib/temporal-client.js';
import { findOrBuildTemporalCli } from '../scripts/temporal-cli.js';
import { freePort, startDevServer } from '../scripts/temporal-dev-server.js';
import { stopProcess } from '../scripts/stop-process.js';
import { buildWorkflowBundle } from '../scripts/build-workflow-bundle.js';
import { createTestDatabase } from '../test/helpers/test-database.js';
import type { RunAppInput } from '../workflows/definitions.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Cell { rps: number; p50ms: number; p99ms: number }

function parseWrk(out: string): Cell {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const ms = (label: string) => {
    const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
    if (!m) return NaN;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  return { rps, p50ms: ms('50'), p99ms: ms('99') };
}

async function wrk(url: string, connections: number, seconds: number, script: string): Promise<Cell> {
  const out = execFileSync('wrk', ['-t', connections > 1 ? '2' : '1', '-c', String(connections), '-d', `${seconds}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  return parseWrk(out);
}

async function startApi(env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'api/server.ts')], { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port) }, stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`api exited ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return child;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error('api did not become healthy');
}

function startNode(entry: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      if (/worker started/.test(out)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${entry} exited ${code}: ${out}`)));
  });
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Fires `fn` at a fixed rate for `seconds`; returns latencies in ms. */
async function atRate(rate: number, seconds: number, fn: () => Promise<void>): Promise<{ rps: number; p50ms: number; p99ms: number }> {
  const lat: number[] = [];
  const jobs: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    jobs.push((async () => { const s = performance.now(); await fn(); lat.push(performance.now() - s); })());
  }
  await Promise.all(jobs);
  lat.sort((a, b) => a - b);
  return { rps: lat.length / ((performance.now() - t0) / 1000), p50ms: pct(lat, 50), p99ms: pct(lat, 99) };
}

/** As fast as `concurrency` callers can go, for `seconds`. */
async function maxRate(concurrency: number, seconds: number, fn: () => Promise<void>) {
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) { const s = performance.now(); await fn(); lat.push(performance.now() - s); }
  }));
  lat.sort((a, b) => a - b);
  return { rps: lat.length / ((performance.now() - t0) / 1000), p50ms: pct(lat, 50), p99ms: pct(lat, 99) };
}

export async function runRunPathBench(argv: string[]) {
  const seconds = Number(argv[argv.indexOf('--duration') + 1] || 0) || 10;
  execFileSync('bash', [path.join(ROOT, 'scripts', 'install-bench-tools.sh')], { stdio: 'inherit' });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-bench-'));
  const [appPort, proxyPort, apiPort, apiNoRecPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  await writeFile(path.join(dir, 'nginx.conf'), `
worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream app { server 127.0.0.1:${appPort}; keepalive 64; }
  server { listen 127.0.0.1:${appPort}; location / { default_type application/json; return 200 '{"ok":true,"answer":42}'; } }
  server { listen 127.0.0.1:${proxyPort}; location / { proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; } }
}`);
  const nginx = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
  const binary = await findOrBuildTemporalCli();
  const server = await startDevServer({ binary });
  const db = await createTestDatabase('runhook_bench');
  const bundle = await buildWorkflowBundle(path.join(dir, 'bundle.js'));
  const env = { DATABASE_URL: db.url, TEMPORAL_ADDRESS: server.address, WORKFLOW_BUNDLE_PATH: bundle, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
  const children: ChildProcess[] = [];
  try {
    const pool = createPool(db.url, 2);
    await appsRepository(pool).upsert('bench', { name: 'static', url: `http://127.0.0.1:${appPort}/run`, cpu: 1, memoryGb: 1, compute: 'CPU', gpuCount: 0, responseGracePeriod: 900 });
    const { token } = await serviceAccountsRepository(pool).create('bench', 'bench', null);
    children.push(await startApi(env, apiPort));
    children.push(await startApi({ ...env, EVENT_RECORDING: 'false' }, apiNoRecPort));
    children.push(await startNode('worker/main.ts', env));
    const script = path.join(dir, 'post.lua');
    await writeFile(script, `wrk.method = "POST"\nwrk.body = '{"input":"bench"}'\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["Authorization"] = "Bearer ${token}"\n`);

    const targets = {
      direct: `http://127.0.0.1:${appPort}/run`,
      'nginx proxy': `http://127.0.0.1:${proxyPort}/run`,
      '/run': `http://127.0.0.1:${apiPort}/v4/bench/static/run`,
      '/run (recording off)': `http://127.0.0.1:${apiNoRecPort}/v4/bench/static/run`,
    };
    const sync: Record<string, Record<string, Cell>> = {};
    for (const [name, url] of Object.entries(targets)) {
      await wrk(url, 8, 2, script); // warm-up
      sync[name] = { c1: await wrk(url, 1, seconds, script), c32: await wrk(url, 32, seconds, script) };
    }
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM request_events WHERE app_id = 'bench-static'");

    // Async accept: our /run?async=true against raw client.workflow.start of the same workflow.
    const config = loadConfig(env);
    const client = await createTemporalClient(config);
    const rawStart = async () => {
      const runId = uuidv7();
      const input: RunAppInput = { runId, projectId: 'bench', appId: 'bench-static', appName: 'static', url: targets.direct, runTimeoutMs: 60_000, heartbeatTimeoutMs: 30_000, appCallTaskQueue: config.taskQueues.appCalls };
      await client.workflow.start('runAppWorkflow', { workflowId: runId, taskQueue: config.taskQueues.runs, args: [input] });
    };
    const apiStart = async () => {
      const res = await fetch(`${targets['/run']}?async=true`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"input":"bench"}' });
      if (res.status !== 202) throw new Error(`async run answered ${res.status}`);
      await res.arrayBuffer();
    };
    const asyncAccept = {
      'raw workflow.start @50/s': await atRate(50, seconds, rawStart),
      '/run?async=true @50/s': await atRate(50, seconds, apiStart),
      'raw workflow.start max (c=16)': await maxRate(16, seconds, rawStart),
      '/run?async=true max (c=16)': await maxRate(16, seconds, apiStart),
    };
    await client.connection.close();
    await pool.end();

    const ratios = {
      'run_vs_nginx_proxy_throughput_c32': sync['/run'].c32.rps / sync['nginx proxy'].c32.rps,
      'run_added_p50_over_direct_c1_ms': sync['/run'].c1.p50ms - sync.direct.c1.p50ms,
      'recording_on_vs_off_throughput_c32': sync['/run'].c32.rps / sync['/run (recording off)'].c32.rps,
      'async_accept_vs_raw_max_throughput': asyncAccept['/run?async=true max (c=16)'].rps / asyncAccept['raw workflow.start max (c=16)'].rps,
    };
    return { seconds, sync, eventsRecorded: rows[0].n, asyncAccept, ratios, load: os.loadavg() };
  } finally {
    for (const c of children) await stopProcess(c);
    nginx.kill('SIGQUIT');
    await server.stop();
    await db.drop();
  }
}

export function printRunPathResult(r: Awaited<ReturnType<typeof runRunPathBench>>): void {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 0) : 'n/a');
  console.log(`\nsync overhead (${r.seconds}s per cell, wrk, POST)`);
  console.log('target                 c=1 req/s   p50 ms  p99 ms | c=32 req/s   p50 ms  p99 ms');
  for (const [name, c] of Object.entries(r.sync)) {
    console.log(`${name.padEnd(22)} ${f(c.c1.rps).padStart(10)} ${f(c.c1.p50ms).padStart(8)} ${f(c.c1.p99ms).padStart(7)} | ${f(c.c32.rps).padStart(10)} ${f(c.c32.p50ms).padStart(8)} ${f(c.c32.p99ms).padStart(7)}`);
  }
  console.log(`\nasync accept`);
  for (const [name, c] of Object.entries(r.asyncAccept)) console.log(`${name.padEnd(32)} ${f(c.rps).padStart(8)} runs/s  p50 ${f(c.p50ms)} ms  p99 ${f(c.p99ms)} ms`);
  console.log('\nratios');
  for (const [k, v] of Object.entries(r.ratios)) console.log(`  ${k}: ${v.toFixed(3)}`);
  console.log(`events recorded during the sync runs: ${r.eventsRecorded}; load average ${r.load.map((x) => x.toFixed(2)).join(' ')}`);
}
