// Records workflow histories from real runs on a real dev server into test/replay/histories/,
// so the replay test catches any workflow change that would break runs already in flight.
// Usage: npm run record-histories   (rerun after an intentional, patched() workflow change)
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { v7 as uuidv7 } from 'uuid';
import { loadConfig } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { appsRepository } from '../db/repositories/apps.js';
import { runsRepository } from '../db/repositories/runs.js';
import { launchAsyncRun } from '../api/run-launcher.js';
import { createTemporalClient } from '../lib/temporal-client.js';
import { createWorkers } from '../worker/create-workers.js';
import { startEchoApp } from '../examples/echo/echo-app.js';
import { startWebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { createTestDatabase } from '../test/helpers/test-database.js';
import { findOrBuildTemporalCli } from './temporal-cli.js';
import { startDevServer } from './temporal-dev-server.js';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'test', 'replay', 'histories');

Runtime.install({ logger: new DefaultLogger('WARN') });
const binary = await findOrBuildTemporalCli();
const server = await startDevServer({ binary });
const db = await createTestDatabase('runhook_rec');
const echo = await startEchoApp();
const receiver = await startWebhookReceiver();
// No PAYLOAD_CODEC_KEY: recorded payloads stay plaintext, so the replay needs no key.
const config = loadConfig({
  DATABASE_URL: db.url,
  TEMPORAL_ADDRESS: server.address,
  APP_CALL_HEARTBEAT_MS: '2000',
  WORKER_SHUTDOWN_GRACE_MS: '0',
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
});
const pool = createPool(config.databaseUrl, 4);
const temporal = await createTemporalClient(config);
const connection = await NativeConnection.connect({ address: server.address });
const workers = await createWorkers({ config, connection, pool });
const running = workers.run();
const apps = appsRepository(pool);
const ok = await apps.upsert('rec', { name: 'echo', url: echo.url, cpu: 1, memoryGb: 1, compute: 'CPU', gpuCount: 0, responseGracePeriod: 900 });
const slow = await apps.upsert('rec', { name: 'slow', url: echo.url, cpu: 1, memoryGb: 1, compute: 'CPU', gpuCount: 0, responseGracePeriod: 1 });
const gone = await apps.upsert('rec', { name: 'gone', url: 'http://127.0.0.1:1/run', cpu: 1, memoryGb: 1, compute: 'CPU', gpuCount: 0, responseGracePeriod: 900 });

// Files are named after the workflow code generation that wrote them (v2: local bookkeeping
// activities); older generations stay, so runs in flight across an upgrade keep replaying.
const GENERATION = 'v2';
const hook = receiver.endpoint((n) => ({ status: n === 1 ? 404 : 200 }));
const show = (workflowId: string) =>
  execFileSync(binary, ['workflow', 'show', '--workflow-id', workflowId, '--address', server.address, '--output', 'json'], { encoding: 'utf8' });
const scenarios: { name: string; app: typeof ok; body: unknown; cancelAfterMs?: number; webhook?: boolean }[] = [
  { name: 'succeeded', app: ok, body: { hello: 'replay' } },
  { name: 'app-error-status', app: ok, body: { status: 500 } },
  { name: 'app-unreachable', app: gone, body: {} },
  { name: 'timed-out', app: slow, body: { sleep_ms: 4000 } },
  { name: 'cancelled', app: ok, body: { sleep_ms: 5000 }, cancelAfterMs: 700 },
  // The receiver answers 404 first: the delivery's history holds a retried attempt.
  { name: 'webhook', app: ok, body: { hello: 'webhook' }, webhook: true },
];
try {
  for (const s of scenarios) {
    const runId = uuidv7();
    const webhook = s.webhook ? { endpoint: hook, secretSealed: null } : null;
    await launchAsyncRun({ config, temporal, runs: runsRepository(pool) }, s.app, runId, Buffer.from(JSON.stringify(s.body)), webhook);
    const handle = temporal.workflow.getHandle(runId);
    if (s.cancelAfterMs) {
      await new Promise((r) => setTimeout(r, s.cancelAfterMs));
      await handle.cancel();
    }
    await handle.result().catch(() => {});
    const json = show(runId);
    await writeFile(path.join(OUT, `run-app-${GENERATION}-${s.name}.json`), json);
    console.log(`recorded run-app-${GENERATION}-${s.name}.json (${JSON.parse(json).events.length} events)`);
    if (s.webhook) {
      const child = temporal.workflow.getHandle(`webhook-${runId}`);
      await child.result();
      const childJson = show(`webhook-${runId}`);
      await writeFile(path.join(OUT, `deliver-webhook-${GENERATION}-retried.json`), childJson);
      console.log(`recorded deliver-webhook-${GENERATION}-retried.json (${JSON.parse(childJson).events.length} events)`);
    }
  }
} finally {
  workers.shutdown();
  await running;
  await connection.close();
  await temporal.connection.close();
  await pool.end();
  await echo.close();
  await receiver.close();
  await db.drop();
  await server.stop();
}
