import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { loadConfig, type Config, type ConfigName } from '../../config/config.js';
import { createPool } from '../../db/pool.js';
import { appsRepository, type App } from '../../db/repositories/apps.js';
import { serviceAccountsRepository } from '../../db/repositories/service-accounts.js';
import { buildApp } from '../../api/app.js';
import { createTemporalClient } from '../../lib/temporal-client.js';
import { createWorkers, type WorkerSet } from '../../worker/create-workers.js';
import type { AppDefinition } from '../../lib/app-manifest.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface Stack {
  baseUrl: string;
  config: Config;
  env: Record<string, string>;
  db: TestDatabase;
  pool: Pool;
  temporal: Client;
  api: FastifyInstance;
  workers: WorkerSet | null;
  token(projectId: string, opts?: { expiresAt?: Date }): Promise<string>;
  deploy(projectId: string, def: Partial<AppDefinition> & { name: string; url: string }): Promise<App>;
  startWorkers(): Promise<WorkerSet>;
  stopWorkers(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real stack for one test file: its own database, its own task queues on the shared Temporal
 * dev server, the API on a free port and (optionally) an in-process worker.
 */
let runtimeInstalled = false;
function quietRuntime() {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  // Worker state changes at INFO drown the test output; warnings and errors still show.
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

export async function startStack(opts: { worker?: boolean; env?: Partial<Record<ConfigName, string>> } = {}): Promise<Stack> {
  quietRuntime();
  const db = await createTestDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    WORKFLOW_BUNDLE_PATH: inject('workflowBundlePath'),
    TASK_QUEUE_PREFIX: `t-${randomBytes(4).toString('hex')}`,
    APP_CALL_HEARTBEAT_MS: '2000',
    WORKER_SHUTDOWN_GRACE_MS: '0',
    PORT: '0',
    LOG_LEVEL: 'warn',
    // Webhook receivers in tests listen on loopback; secrets are sealed with a throwaway key.
    WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
    PAYLOAD_CODEC_KEY: randomBytes(32).toString('base64'),
    // Worker processes a test starts would all want the default port; tests that read it set one.
    WORKER_METRICS_ADDRESS: 'off',
    ...(opts.env as Record<string, string>),
  };
  const config = loadConfig(env);
  const pool = createPool(config.databaseUrl, 5);
  const temporal = await createTemporalClient(config);
  const api = await buildApp({ config, pool, temporal });
  await api.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;

  let workers: WorkerSet | null = null;
  let workerRun: Promise<void> | null = null;
  let connection: NativeConnection | null = null;
  const stack: Stack = {
    baseUrl,
    config,
    env,
    db,
    pool,
    temporal,
    api,
    get workers() {
      return workers;
    },
    async token(projectId, o = {}) {
      return (await serviceAccountsRepository(pool).create(projectId, 'test', o.expiresAt ?? null)).token;
    },
    async deploy(projectId, def) {
      return appsRepository(pool).upsert(projectId, {
        cpu: 1, memoryGb: 1, compute: 'CPU', gpuCount: 0, responseGracePeriod: 900, ...def,
      });
    },
    async startWorkers() {
      connection ??= await NativeConnection.connect({ address: config.temporalAddress });
      workers = await createWorkers({ config, connection, pool });
      workerRun = workers.run();
      return workers;
    },
    async stopWorkers() {
      workers?.shutdown();
      await workerRun;
      workers = null;
      workerRun = null;
    },
    async close() {
      await stack.stopWorkers();
      await connection?.close();
      await api.close();
      // Recording loses nothing in any test that runs a stack: every event written, none dropped.
      const recorded = api.events.recorder.stats();
      await temporal.connection.close();
      await pool.end();
      await db.drop();
      if (recorded.dropped !== 0 || recorded.buffered !== 0 || recorded.rejected !== 0) {
        throw new Error(`event recorder finished with ${recorded.dropped} dropped, ${recorded.buffered} unwritten and ${recorded.rejected} rejected events`);
      }
    },
  };
  if (opts.worker) await stack.startWorkers();
  return stack;
}

export function authHeaders(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra };
}

export async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
