import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from 'pg';
import { loadConfig, type Config, type ConfigName } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { appsRepository, type App } from '../db/repositories/apps.js';
import { serviceAccountsRepository } from '../db/repositories/service-accounts.js';
import { findOrBuildTemporalCli } from '../scripts/temporal-cli.js';
import { freePort, startDevServer, type DevServer } from '../scripts/temporal-dev-server.js';
import { buildWorkflowBundle } from '../scripts/build-workflow-bundle.js';
import { stopProcess } from '../scripts/stop-process.js';
import { createTestDatabase, type TestDatabase } from '../test/helpers/test-database.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface BenchApiSpec {
  /** A label for logs and tables, e.g. "api" or "api (recording off)". */
  name: string;
  env?: Partial<Record<ConfigName, string>>;
}

export interface BenchStack {
  /** Environment shared by every child (DATABASE_URL, TEMPORAL_ADDRESS, task queues, bundle…). */
  env: Record<string, string>;
  config: Config;
  pool: Pool;
  temporalAddress: string;
  /** Base URL of each API process, by the name given in its spec. */
  apis: Record<string, string>;
  /** Process id of each API process, by name (CPU accounting, profiling). */
  apiPids: Record<string, number>;
  /** Process id of the worker, when one runs (pausing it isolates the accept path from the drain). */
  workerPid: number | null;
  token(projectId: string): Promise<string>;
  deploy(projectId: string, name: string, url: string): Promise<App>;
  stop(): Promise<void>;
}

export interface BenchStackOptions {
  dir: string;
  apis: BenchApiSpec[];
  worker: boolean;
  log: (line: string) => void;
  /** Extra node flags for the API processes, e.g. ['--cpu-prof', '--cpu-prof-dir=…']. */
  apiNodeFlags?: string[];
}

/** Remembers the last lines a child wrote, to explain why it died. */
export function tail(child: ChildProcess): () => string {
  let buf = '';
  const keep = (d: Buffer) => {
    buf = (buf + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => buf.trim();
}

export function spawnTs(entry: string, env: Record<string, string>, nodeFlags: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export async function waitUntil(what: string, child: ChildProcess, output: () => string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode) throw new Error(`${what} exited (${child.signalCode ?? child.exitCode}): ${output()}`);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms: ${output()}`);
}

/**
 * What the run-path benchmarks need on a fresh machine: a Temporal dev server (in memory), a
 * throwaway migrated database, and the API and the worker as separate processes (as in production,
 * and so the load generator does not share their event loop).
 */
export async function startBenchStack(opts: BenchStackOptions): Promise<BenchStack> {
  const { log } = opts;
  const children: ChildProcess[] = [];
  let server: DevServer | undefined;
  let db: TestDatabase | undefined;
  let pool: Pool | undefined;
  const stop = async () => {
    // API first (it flushes its run log and events), then the worker, then what they depend on.
    for (const c of children) await stopProcess(c, 15_000);
    await pool?.end().catch(() => {});
    await server?.stop();
    await db?.drop().catch((err) => log(`could not drop ${db?.name}: ${(err as Error).message}`));
  };
  try {
    const binary = await findOrBuildTemporalCli(log);
    log('starting the Temporal dev server, a throwaway database and the workflow bundle…');
    const [srv, database, bundle] = await Promise.all([
      startDevServer({ binary }),
      createTestDatabase('runhook_bench'),
      buildWorkflowBundle(path.join(opts.dir, 'workflow-bundle.js')),
    ]);
    server = srv;
    db = database;
    const env: Record<string, string> = {
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: srv.address,
      WORKFLOW_BUNDLE_PATH: bundle,
      TASK_QUEUE_PREFIX: `bench-${randomBytes(3).toString('hex')}`,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WORKER_SHUTDOWN_GRACE_MS: '2000',
    };
    const config = loadConfig(env);
    pool = createPool(db.url, 4);
    const apis: Record<string, string> = {};
    const apiPids: Record<string, number> = {};
    for (const spec of opts.apis) {
      const port = await freePort();
      const child = spawnTs('api/server.ts', { ...env, ...(spec.env as Record<string, string>), PORT: String(port) }, opts.apiNodeFlags);
      children.push(child);
      const base = `http://127.0.0.1:${port}`;
      await waitUntil(spec.name, child, tail(child), async () => {
        try {
          return (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok;
        } catch {
          return false;
        }
      }, 60_000);
      apis[spec.name] = base;
      apiPids[spec.name] = child.pid!;
      log(`${spec.name} (pid ${child.pid}) listening at ${base}`);
    }
    let workerPid: number | null = null;
    if (opts.worker) {
      const child = spawnTs('worker/main.ts', env, (process.env.BENCH_WORKER_NODE_FLAGS ?? '').split(' ').filter(Boolean));
      children.push(child);
      const output = tail(child);
      await waitUntil('worker', child, output, async () => output().includes('worker started'), 60_000);
      log(`worker (pid ${child.pid}) polling ${config.taskQueues.runs} and ${config.taskQueues.appCalls}`);
      workerPid = child.pid!;
    }
    const p = pool;
    return {
      env,
      config,
      pool: p,
      temporalAddress: srv.address,
      apis,
      apiPids,
      workerPid,
      token: async (projectId) => (await serviceAccountsRepository(p).create(projectId, 'bench', null)).token,
      deploy: (projectId, name, url) =>
        appsRepository(p).upsert(projectId, { name, url, cpu: 1, memoryGb: 1, compute: 'CPU', gpuCount: 0, responseGracePeriod: 900 }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
