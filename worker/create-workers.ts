import { createRequire } from 'node:module';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import type { Config } from '../config/config.js';
import { createAppDispatcher } from '../lib/app-client.js';
import { runsRepository } from '../db/repositories/runs.js';
import { createRunActivities } from '../activities/index.js';
import { priceTable } from '../db/metrics/cost.js';
import { webhooksRepository } from '../db/repositories/webhooks.js';
import { makeDeliverWebhookActivities } from '../activities/deliver-webhook.js';
import { createWebhookDispatcher } from '../lib/webhook-destination.js';
import { dataConverterFor } from '../lib/payload-codec.js';

const require = createRequire(import.meta.url);

export interface WorkerSet {
  workers: Worker[];
  /** Resolves when every worker has stopped (after shutdown()). */
  run(): Promise<void>;
  shutdown(): void;
}

/**
 * Three workers share one connection: workflows and bookkeeping on the runs queue, app calls on
 * their own queue, so hours-long app calls never take the slots that short work needs, and webhook
 * deliveries (workflow and attempts) on theirs, so slow receivers never hold up runs.
 */
export async function createWorkers(opts: {
  config: Config;
  connection: NativeConnection;
  pool: Pool;
  identity?: string;
}): Promise<WorkerSet> {
  const { config, connection } = opts;
  const dispatcher = createAppDispatcher();
  const activities = createRunActivities({ runs: runsRepository(opts.pool), pool: opts.pool, prices: priceTable(config), dispatcher });
  const webhookDispatcher = createWebhookDispatcher({ allowPrivate: config.webhookAllowPrivateDestinations, connections: config.workerWebhookSlots });
  const webhookActivities = makeDeliverWebhookActivities({
    webhooks: webhooksRepository(opts.pool),
    dispatcher: webhookDispatcher,
    codecKey: config.payloadCodecKey,
    attemptTimeoutMs: config.webhookAttemptTimeoutMs,
    allowPrivateDestinations: config.webhookAllowPrivateDestinations,
  });
  const workflowSource = config.workflowBundlePath
    ? { workflowBundle: { codePath: config.workflowBundlePath } }
    : { workflowsPath: require.resolve('../workflows/index.ts') };
  const common = {
    connection,
    namespace: config.temporalNamespace,
    shutdownGraceTime: config.workerShutdownGraceMs,
    // The codec runs in the worker itself, also with a prebuilt bundle (it is not part of the bundle).
    dataConverter: dataConverterFor(config.payloadCodecKey),
    ...(opts.identity ? { identity: opts.identity } : {}),
  };
  const runsWorker = await Worker.create({
    ...common,
    taskQueue: config.taskQueues.runs,
    ...workflowSource,
    activities: { recordRunStarted: activities.recordRunStarted, recordRunOutcome: activities.recordRunOutcome, pruneRunPayloads: activities.pruneRunPayloads, failOrphanedRuns: activities.failOrphanedRuns },
    maxConcurrentWorkflowTaskExecutions: config.workerWorkflowSlots,
    maxConcurrentActivityTaskExecutions: config.workerActivitySlots,
  });
  const appCallWorker = await Worker.create({
    ...common,
    taskQueue: config.taskQueues.appCalls,
    activities: { callAppActivity: activities.callAppActivity },
    maxConcurrentActivityTaskExecutions: config.workerAppCallSlots,
  });
  const webhookWorker = await Worker.create({
    ...common,
    taskQueue: config.taskQueues.webhooks,
    ...workflowSource,
    activities: webhookActivities,
    maxConcurrentActivityTaskExecutions: config.workerWebhookSlots,
  });
  const workers = [runsWorker, appCallWorker, webhookWorker];
  return {
    workers,
    async run() {
      try {
        await Promise.all(workers.map((w) => w.run()));
      } finally {
        await Promise.all([dispatcher.close(), webhookDispatcher.close()]);
      }
    },
    shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    },
  };
}
