import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Agent, request } from 'undici';
import { QUIET_BUNDLER_LOGGER } from '../scripts/build-workflow-bundle.js';
import { atFixedRate } from './load.js';

export interface FloorActivities {
  answer(id: string): Promise<void>;
  noteFinished(id: string): Promise<void>;
  post(id: string, url: string): Promise<void>;
}

export interface FloorTimes {
  /** Per run id: when the emptied app-call activity answered, and when the emptied outcome step ran. */
  answeredAt: Map<string, number>;
  finishedAt: Map<string, number>;
  ids: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs bench/floor-workflows.ts at `rate` per second for `seconds` on the stack's Temporal server,
 * with workers in this process polling their own task queues (one for runs, one for deliveries,
 * as ours do). The caller reads the POSTs' arrival on its receiver under each id's X-Request-Id.
 */
export async function runWebhookFloor(o: { temporalAddress: string; namespace: string; taskQueuePrefix: string; receiverUrl: string; rate: number; seconds: number }): Promise<FloorTimes> {
  try {
    // The workers' state lines would bury the bench's own output.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // A runtime already exists in this process: keep it.
  }
  const times: FloorTimes = { answeredAt: new Map(), finishedAt: new Map(), ids: [] };
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  const posted = new Set<string>();
  const activities: FloorActivities = {
    async answer(id) {
      times.answeredAt.set(id, Date.now());
    },
    async noteFinished(id) {
      times.finishedAt.set(id, Date.now());
    },
    async post(id, url) {
      const res = await request(url, { method: 'POST', dispatcher, headers: { 'content-type': 'application/json', 'x-request-id': id }, body: '{}' });
      await res.body.dump();
      posted.add(id);
    },
  };
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL('./floor-workflows.ts', import.meta.url)), logger: QUIET_BUNDLER_LOGGER });
  const connection = await NativeConnection.connect({ address: o.temporalAddress });
  const runsQueue = `${o.taskQueuePrefix}-floor-runs`;
  const deliveriesQueue = `${o.taskQueuePrefix}-floor-deliveries`;
  const [runs, deliveries] = await Promise.all([
    Worker.create({ connection, namespace: o.namespace, taskQueue: runsQueue, workflowBundle, activities }),
    Worker.create({ connection, namespace: o.namespace, taskQueue: deliveriesQueue, workflowBundle, activities }),
  ]);
  const clientConnection = await Connection.connect({ address: o.temporalAddress });
  const client = new Client({ connection: clientConnection, namespace: o.namespace });
  let seq = 0;
  const prefix = `floor-${Date.now()}`;
  const load = async () => {
    await atFixedRate(o.rate, o.seconds, async () => {
      const id = `${prefix}-${++seq}`;
      times.ids.push(id);
      await client.workflow.start('floorRunWorkflow', { workflowId: id, taskQueue: runsQueue, args: [id, o.receiverUrl, deliveriesQueue] });
    });
    // Until every delivery's POST was answered (the receiver has it), or a minute at most.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && posted.size < times.ids.length) await sleep(100);
  };
  try {
    const done = load();
    await Promise.all([runs.runUntil(done), deliveries.runUntil(done)]);
  } finally {
    await dispatcher.close();
    await clientConnection.close();
    await connection.close();
  }
  return times;
}
