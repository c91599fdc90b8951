import { hostname } from 'node:os';
import { NativeConnection, Runtime, makeTelemetryFilterString, DefaultLogger } from '@temporalio/worker';
import { loadConfigOrExit } from '../config/config.js';
import { createPool } from '../db/pool.js';
import { createWorkers } from './create-workers.js';
import { createTemporalClient } from '../lib/temporal-client.js';
import { ensureRetentionSchedule } from './retention-schedule.js';
import { jsonLogLine } from './json-log.js';

const config = loadConfigOrExit();

// Installed first: the runtime's own signal handlers call shutdown() on every worker on SIGINT/SIGTERM.
Runtime.install({
  // JSON lines with run_id. The SDK's INFO lines (every state change) are noise at scale; debug opts in.
  logger: new DefaultLogger(config.logLevel === 'debug' || config.logLevel === 'trace' ? 'DEBUG' : 'WARN', (entry) =>
    process.stderr.write(`${jsonLogLine(entry)}\n`),
  ),
  telemetryOptions: {
    // Core's own lines go through the same logger, so they are JSON too.
    logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) },
    // Core serves worker, poller and slot metrics, and ours made through the activities' metricMeter.
    ...(config.workerMetricsAddress
      ? { metrics: { prometheus: { bindAddress: config.workerMetricsAddress, countersTotalSuffix: true }, globalTags: { service: 'runhook-worker' } } }
      : {}),
  },
});

const pool = createPool(config.databaseUrl, config.databasePoolSize);
const connection = await NativeConnection.connect({ address: config.temporalAddress });
const client = await createTemporalClient(config);
await ensureRetentionSchedule(client, config);
await client.connection.close();
const set = await createWorkers({ config, connection, pool, identity: `${process.pid}@${hostname()}` });
console.log(
  JSON.stringify({
    level: 'info',
    msg: 'worker started',
    taskQueues: config.taskQueues,
    namespace: config.temporalNamespace,
    pid: process.pid,
    metrics: config.workerMetricsAddress ? `http://${config.workerMetricsAddress}/metrics` : null,
  }),
);
try {
  await set.run();
} finally {
  await connection.close();
  await pool.end();
}
