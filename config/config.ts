// Every setting of the stack lives here, read from the environment, so the local stack, the tests,
// the docker-compose services and the docs all agree on one list of names.

type Kind = 'string' | 'int' | 'number' | 'bool' | 'url' | 'enum';

interface VarSpec {
  kind: Kind;
  default?: string;
  doc: string;
  min?: number;
  max?: number;
  values?: readonly string[];
}

export const CONFIG_VARS = {
  DATABASE_URL: { kind: 'url', default: 'postgres://postgres@127.0.0.1:5432/runhook', doc: 'PostgreSQL or TimescaleDB connection string.' },
  DATABASE_POOL_SIZE: { kind: 'int', default: '10', min: 1, max: 500, doc: 'Connections in each process pool.' },
  HOST: { kind: 'string', default: '127.0.0.1', doc: 'Address the API listens on.' },
  PORT: { kind: 'int', default: '8080', min: 0, max: 65535, doc: 'Port of the API (serves /v2 and /v4).' },
  LOG_LEVEL: { kind: 'enum', default: 'info', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], doc: 'Log level of API and worker.' },
  TEMPORAL_ADDRESS: { kind: 'string', default: '127.0.0.1:7233', doc: 'Temporal frontend host:port.' },
  TEMPORAL_NAMESPACE: { kind: 'string', default: 'default', doc: 'Temporal namespace.' },
  TEMPORAL_UI_URL: { kind: 'url', default: 'http://127.0.0.1:8233', doc: 'Temporal Web UI, used for links.' },
  TASK_QUEUE_PREFIX: { kind: 'string', default: 'runhook', doc: 'Prefix of the task queue names (runs, app-calls, webhooks).' },
  RUN_BODY_LIMIT_BYTES: { kind: 'int', default: String(10 * 1024 * 1024), min: 1024, max: 1024 * 1024 * 1024, doc: 'Largest run request body; larger gets 413.' },
  RUN_MAX_SECONDS: { kind: 'int', default: '43200', min: 1, max: 43200, doc: 'Hard cap on one async run (12 h).' },
  APP_CALL_HEARTBEAT_MS: { kind: 'int', default: '30000', min: 500, max: 600000, doc: 'Heartbeat timeout of the app-call activity: how long a lost worker goes unnoticed.' },
  WORKER_APP_CALL_SLOTS: { kind: 'int', default: '200', min: 1, max: 10000, doc: 'Concurrent app calls per worker.' },
  WORKER_WORKFLOW_SLOTS: { kind: 'int', default: '40', min: 2, max: 2000, doc: 'Concurrent workflow tasks per worker.' },
  WORKER_ACTIVITY_SLOTS: { kind: 'int', default: '100', min: 1, max: 10000, doc: 'Concurrent bookkeeping activities per worker.' },
  WORKER_SHUTDOWN_GRACE_MS: { kind: 'int', default: '30000', min: 0, max: 3600000, doc: 'Grace time for in-flight work on SIGTERM.' },
  RESULT_RETENTION_SECONDS: { kind: 'int', default: String(7 * 86400), min: 1, max: 3650 * 86400, doc: 'How long run request/response bodies are kept; after it GET .../result answers 410.' },
  RESULT_PRUNE_INTERVAL_SECONDS: { kind: 'int', default: '3600', min: 1, max: 86400, doc: 'How often the Temporal schedule prunes bodies past retention.' },
  IDEMPOTENCY_KEY_TTL_SECONDS: { kind: 'int', default: String(24 * 3600), min: 1, max: 30 * 86400, doc: 'How long an Idempotency-Key maps to its run.' },
  EVENT_RECORDING: { kind: 'bool', default: 'true', doc: 'Record request and cost events for the dashboard (false only for benchmarks comparing its cost).' },
  WORKFLOW_BUNDLE_PATH: { kind: 'string', default: '', doc: 'Prebuilt workflow bundle (npm run build); empty bundles at start.' },
  PRICE_CPU_CORE_SECOND_USD: { kind: 'number', default: '0.00000655', min: 0, max: 1, doc: 'Price of one CPU core per second of running time, in USD (dashboard cost).' },
  PRICE_MEMORY_GB_SECOND_USD: { kind: 'number', default: '0.00000222', min: 0, max: 1, doc: 'Price of one GB of memory per second of running time, in USD (dashboard cost).' },
  PAYLOAD_CODEC_KEY: { kind: 'string', default: '', doc: 'AES-256-GCM key (base64, 32 bytes) encrypting Temporal payloads and stored webhook secrets; every API and worker process needs the same key. Empty: payloads in plaintext and runs with X-Webhook-Secret are refused.' },
  PAYLOAD_CODEC_ENDPOINT: { kind: 'bool', default: 'false', doc: 'Serve /codec/encode and /codec/decode for the Temporal Web UI (--ui-codec-endpoint); unauthenticated, so only behind your own access control.' },
  WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: { kind: 'bool', default: 'false', doc: 'Allow webhook endpoints that resolve to loopback, private, link-local or metadata addresses (local stack and tests).' },
  WEBHOOK_ATTEMPT_TIMEOUT_MS: { kind: 'int', default: '10000', min: 100, max: 60000, doc: 'Timeout of one webhook delivery attempt; a timeout counts as a network error (retried).' },
  WORKER_METRICS_ADDRESS: { kind: 'string', default: '127.0.0.1:9464', doc: 'host:port of the worker\'s Prometheus /metrics (Temporal Core runtime metrics plus app-call latency and webhook deliveries); off disables it.' },
  WORKER_WEBHOOK_SLOTS: { kind: 'int', default: '100', min: 1, max: 10000, doc: 'Concurrent webhook delivery attempts per worker.' },
  PRICE_GPU_SECOND_USD: { kind: 'string', default: 'TURING_T4=0.000164,ADA_L4=0.000222,AMPERE_A10=0.000306,ADA_L40=0.000542,AMPERE_A100_40GB=0.000583,AMPERE_A100_80GB=0.000694,HOPPER_H100=0.001097', doc: 'Price of one GPU per second by GPU type, as TYPE=usd,TYPE=usd (dashboard cost).' },
} as const satisfies Record<string, VarSpec>;

export type ConfigName = keyof typeof CONFIG_VARS;

export interface Config {
  databaseUrl: string;
  databasePoolSize: number;
  host: string;
  port: number;
  logLevel: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string;
  taskQueues: { runs: string; appCalls: string; webhooks: string };
  runBodyLimitBytes: number;
  runMaxSeconds: number;
  appCallHeartbeatMs: number;
  workerAppCallSlots: number;
  workerWorkflowSlots: number;
  workerActivitySlots: number;
  workerShutdownGraceMs: number;
  workflowBundlePath: string;
  resultRetentionSeconds: number;
  eventRecording: boolean;
  resultPruneIntervalSeconds: number;
  idempotencyKeyTtlSeconds: number;
  priceCpuCoreSecondUsd: number;
  priceMemoryGbSecondUsd: number;
  /** TYPE=usd,…; parsed by priceTable() in db/metrics/cost.ts. */
  priceGpuSecondUsd: string;
  /** Base64 of 32 bytes, or '' (no payload encryption, signed webhooks refused). */
  payloadCodecKey: string;
  payloadCodecEndpoint: boolean;
  webhookAllowPrivateDestinations: boolean;
  webhookAttemptTimeoutMs: number;
  workerWebhookSlots: number;
  /** host:port, or '' for no metrics endpoint (WORKER_METRICS_ADDRESS=off). */
  workerMetricsAddress: string;
}

export class ConfigError extends Error {}

function parseVar(name: ConfigName, raw: string | undefined): string | number | boolean {
  const spec: VarSpec = CONFIG_VARS[name];
  const value = raw === undefined || raw === '' ? spec.default ?? '' : raw;
  const bad = (why: string) => new ConfigError(`invalid ${name}=${JSON.stringify(value)}: ${why}`);
  switch (spec.kind) {
    case 'int':
    case 'number': {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) throw bad('expected a number');
      if (spec.kind === 'int' && !Number.isInteger(n)) throw bad('expected a whole number');
      if (spec.min !== undefined && n < spec.min) throw bad(`must be at least ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) throw bad(`must be at most ${spec.max}`);
      return n;
    }
    case 'bool':
      if (['true', '1', 'yes'].includes(value)) return true;
      if (['false', '0', 'no', ''].includes(value)) return false;
      throw bad('expected true or false');
    case 'url':
      try {
        new URL(value);
      } catch {
        throw bad('expected an absolute URL');
      }
      return value;
    case 'enum':
      if (!spec.values!.includes(value)) throw bad(`expected one of ${spec.values!.join(', ')}`);
      return value;
    default:
      return value;
  }
}

/** Reads and validates the whole configuration; a bad value throws naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const v = <T>(name: ConfigName) => parseVar(name, env[name]) as T;
  const prefix = v<string>('TASK_QUEUE_PREFIX');
  return {
    databaseUrl: v('DATABASE_URL'),
    databasePoolSize: v('DATABASE_POOL_SIZE'),
    host: v('HOST'),
    port: v('PORT'),
    logLevel: v('LOG_LEVEL'),
    temporalAddress: v('TEMPORAL_ADDRESS'),
    temporalNamespace: v('TEMPORAL_NAMESPACE'),
    temporalUiUrl: v('TEMPORAL_UI_URL'),
    taskQueues: { runs: `${prefix}-runs`, appCalls: `${prefix}-app-calls`, webhooks: `${prefix}-webhooks` },
    runBodyLimitBytes: v('RUN_BODY_LIMIT_BYTES'),
    runMaxSeconds: v('RUN_MAX_SECONDS'),
    appCallHeartbeatMs: v('APP_CALL_HEARTBEAT_MS'),
    workerAppCallSlots: v('WORKER_APP_CALL_SLOTS'),
    workerWorkflowSlots: v('WORKER_WORKFLOW_SLOTS'),
    workerActivitySlots: v('WORKER_ACTIVITY_SLOTS'),
    workerShutdownGraceMs: v('WORKER_SHUTDOWN_GRACE_MS'),
    workflowBundlePath: v('WORKFLOW_BUNDLE_PATH'),
    resultRetentionSeconds: v('RESULT_RETENTION_SECONDS'),
    eventRecording: v('EVENT_RECORDING'),
    resultPruneIntervalSeconds: v('RESULT_PRUNE_INTERVAL_SECONDS'),
    idempotencyKeyTtlSeconds: v('IDEMPOTENCY_KEY_TTL_SECONDS'),
    priceCpuCoreSecondUsd: v('PRICE_CPU_CORE_SECOND_USD'),
    priceMemoryGbSecondUsd: v('PRICE_MEMORY_GB_SECOND_USD'),
    priceGpuSecondUsd: v('PRICE_GPU_SECOND_USD'),
    payloadCodecKey: codecKey(v<string>('PAYLOAD_CODEC_KEY')),
    payloadCodecEndpoint: v('PAYLOAD_CODEC_ENDPOINT'),
    webhookAllowPrivateDestinations: v('WEBHOOK_ALLOW_PRIVATE_DESTINATIONS'),
    webhookAttemptTimeoutMs: v('WEBHOOK_ATTEMPT_TIMEOUT_MS'),
    workerWebhookSlots: v('WORKER_WEBHOOK_SLOTS'),
    workerMetricsAddress: hostPort(v<string>('WORKER_METRICS_ADDRESS')),
  };
}

function hostPort(value: string): string {
  const v = value.trim();
  if (v === 'off') return '';
  if (!/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/.test(v)) throw new ConfigError(`invalid WORKER_METRICS_ADDRESS: expected host:port such as 0.0.0.0:9464, got "${value}"`);
  return v;
}

function codecKey(value: string): string {
  const key = value.trim();
  // Checked here so a truncated key stops the process at start, not at the first signed webhook.
  if (key && (!/^[A-Za-z0-9+/]+={0,2}$/.test(key) || Buffer.from(key, 'base64').length !== 32)) {
    throw new ConfigError('invalid PAYLOAD_CODEC_KEY: expected the base64 of 32 random bytes (openssl rand -base64 32)');
  }
  return key;
}

/** For process entry points: a bad value stops the process with a message naming it. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(78);
    }
    throw err;
  }
}
