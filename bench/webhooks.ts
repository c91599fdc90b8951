// `npm run bench webhooks [--rate N] [--duration N] [--burst N] [--concurrency N]`: how fast a finished
// run reaches its webhook receiver (loopback), and how many deliveries per second the stack sustains.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { startEchoApp } from '../examples/echo/echo-app.js';
import { startWebhookReceiver } from '../test/helpers/webhook-receiver.js';
import { startBenchStack } from './bench-stack.js';
import { runWebhookFloor } from './webhook-floor.js';
import { atFixedRate, percentile } from './load.js';
import { formatTable, machineInfo } from './report.js';

export interface WebhookBenchOptions {
  rate: number;
  seconds: number;
  burst: number;
  concurrency: number;
}

interface LatencyCell {
  runs: number;
  delivered: number;
  p50ms: number;
  p99ms: number;
  maxMs: number;
}

export interface WebhookBenchResult {
  scenario: 'webhooks';
  machine: Record<string, unknown>;
  options: WebhookBenchOptions;
  /** Run completion (sync: the caller has the response; async: finished_at recorded) to the receiver getting the POST. */
  latency: { sync: LatencyCell; async: LatencyCell; asyncFromAppAnswer: LatencyCell };
  /**
   * The same chain with every step emptied (bench/floor-workflows.ts) on the same server: from the
   * outcome step, and from the activity's answer, to the receiver getting the POST.
   */
  floor: { fromOutcome: LatencyCell; fromAnswer: LatencyCell };
  throughput: { runs: number; deliveredPerSecond: number; seconds: number };
  targets: { p50ms: string; p99ms: string };
  met: { p50: boolean; p99: boolean };
}

export function parseWebhookBenchArgs(argv: string[]): WebhookBenchOptions {
  const o: WebhookBenchOptions = { rate: 20, seconds: 10, burst: 1000, concurrency: 32 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = Number(argv[++i]);
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${a}: expected a positive number`);
    if (a === '--rate') o.rate = v;
    else if (a === '--duration') o.seconds = v;
    else if (a === '--burst') o.burst = Math.round(v);
    else if (a === '--concurrency') o.concurrency = Math.round(v);
    else throw new Error(`unknown option ${a} (webhooks: --rate, --duration, --burst, --concurrency)`);
  }
  return o;
}

function cell(latencies: number[], runs: number): LatencyCell {
  const sorted = [...latencies].sort((a, b) => a - b);
  const r = (n: number) => Math.round(n * 10) / 10;
  return { runs, delivered: sorted.length, p50ms: r(percentile(sorted, 50)), p99ms: r(percentile(sorted, 99)), maxMs: r(sorted[sorted.length - 1] ?? NaN) };
}

const log = (line: string) => console.error(`[bench webhooks] ${line}`);

export async function runWebhookBench(o: WebhookBenchOptions = parseWebhookBenchArgs([])): Promise<WebhookBenchResult> {
  // The API and worker children inherit these: receivers on loopback, secrets sealed with a throwaway key.
  process.env.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS = 'true';
  process.env.PAYLOAD_CODEC_KEY ||= randomBytes(32).toString('base64');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-bench-webhooks-'));
  const machine = machineInfo();
  const echo = await startEchoApp();
  const receiver = await startWebhookReceiver();
  const stack = await startBenchStack({ dir, apis: [{ name: 'api' }], worker: true, log });
  const agent = new Agent({ connections: o.concurrency, keepAliveTimeout: 30_000 });
  try {
    await stack.deploy('bench', 'echo', echo.url);
    const token = await stack.token('bench');
    const endpoint = receiver.endpoint(() => ({ status: 200 }));
    const runUrl = (async: boolean) =>
      `${stack.apis.api}/v4/bench/echo/run?${new URLSearchParams({ webhookEndpoint: endpoint, ...(async ? { async: 'true' } : {}) })}`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-webhook-secret': 'whsec_bench' };
    const deliveredAt = () => new Map(receiver.requests.map((r) => [r.headers['x-request-id'] as string, r.at]));
    const waitDelivered = async (ids: string[], timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const got = deliveredAt();
        if (ids.every((id) => got.has(id))) return got;
        await new Promise((r) => setTimeout(r, 100));
      }
      log(`not every delivery arrived within ${timeoutMs} ms`);
      return deliveredAt();
    };

    const syncRun = async (signal?: AbortSignal) => {
      const res = await request(runUrl(false), { method: 'POST', headers, body: '{"bench":1}', dispatcher: agent, signal });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`sync run answered ${res.statusCode}`);
      return { runId: res.headers['x-run-id'] as string, at: Date.now() };
    };
    const asyncRun = async (signal?: AbortSignal) => {
      const res = await request(runUrl(true), { method: 'POST', headers, body: '{"bench":1}', dispatcher: agent, signal });
      const body = (await res.body.json()) as { run_id: string };
      if (res.statusCode !== 202) throw new Error(`async run answered ${res.statusCode}`);
      return body.run_id;
    };

    log('warm-up: 50 sync and 50 async runs');
    const warm = [...(await Promise.all(Array.from({ length: 50 }, () => syncRun()))).map((r) => r.runId), ...(await Promise.all(Array.from({ length: 50 }, () => asyncRun())))];
    await waitDelivered(warm);

    log(`sync runs with a webhook at ${o.rate}/s for ${o.seconds}s`);
    const sync: { runId: string; at: number }[] = [];
    await atFixedRate(o.rate, o.seconds, async (signal) => void sync.push(await syncRun(signal)));
    const syncGot = await waitDelivered(sync.map((s) => s.runId));
    const syncLatency = sync.filter((s) => syncGot.has(s.runId)).map((s) => syncGot.get(s.runId)! - s.at);

    log(`async runs with a webhook at ${o.rate}/s for ${o.seconds}s`);
    const asyncIds: string[] = [];
    await atFixedRate(o.rate, o.seconds, async (signal) => void asyncIds.push(await asyncRun(signal)));
    const asyncGot = await waitDelivered(asyncIds);
    const { rows } = await stack.pool.query('SELECT run_id, finished_at FROM runs WHERE run_id = ANY($1::text[])', [asyncIds]);
    const asyncLatency = rows.filter((r) => asyncGot.has(r.run_id) && r.finished_at).map((r) => asyncGot.get(r.run_id)! - (r.finished_at as Date).getTime());
    // The same deliveries timed from the moment the app answered: what a user waits for, whichever
    // step of the workflow writes finished_at.
    const answered = new Map(echo.calls.filter((c) => c.answeredAt !== undefined).map((c) => [c.requestId, c.answeredAt!]));
    const asyncFromAnswer = asyncIds.filter((id) => asyncGot.has(id) && answered.has(id)).map((id) => asyncGot.get(id)! - answered.get(id)!);

    log(`floor: emptied async runs with a child delivery at ${o.rate}/s for ${o.seconds}s`);
    const floorEndpoint = receiver.endpoint(() => ({ status: 200 }));
    const floor = await runWebhookFloor({
      temporalAddress: stack.temporalAddress, namespace: stack.config.temporalNamespace, taskQueuePrefix: stack.config.taskQueues.runs,
      receiverUrl: floorEndpoint, rate: o.rate, seconds: o.seconds,
    });
    const floorGot = new Map(receiver.to(floorEndpoint).map((r) => [r.headers['x-request-id'] as string, r.at]));
    const floorFrom = (start: Map<string, number>) => floor.ids.filter((id) => floorGot.has(id) && start.has(id)).map((id) => floorGot.get(id)! - start.get(id)!);

    log(`burst: ${o.burst} sync runs with a webhook, ${o.concurrency} callers`);
    const burst: { runId: string; at: number }[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: o.concurrency }, async () => {
      while (next < o.burst) {
        next++;
        burst.push(await syncRun());
      }
    }));
    const burstGot = await waitDelivered(burst.map((b) => b.runId), 300_000);
    const firstDone = Math.min(...burst.map((b) => b.at));
    const lastDelivered = Math.max(...burst.map((b) => burstGot.get(b.runId) ?? 0));
    const seconds = (lastDelivered - firstDone) / 1000;

    const result: WebhookBenchResult = {
      scenario: 'webhooks',
      machine,
      options: o,
      latency: { sync: cell(syncLatency, sync.length), async: cell(asyncLatency, asyncIds.length), asyncFromAppAnswer: cell(asyncFromAnswer, asyncIds.length) },
      floor: { fromOutcome: cell(floorFrom(floor.finishedAt), floor.ids.length), fromAnswer: cell(floorFrom(floor.answeredAt), floor.ids.length) },
      throughput: { runs: burst.length, deliveredPerSecond: Math.round((burst.filter((b) => burstGot.has(b.runId)).length / seconds) * 10) / 10, seconds: Math.round(seconds * 100) / 100 },
      targets: { p50ms: '< 50', p99ms: '< 250' },
      met: { p50: false, p99: false },
    };
    const worstP50 = Math.max(result.latency.sync.p50ms, result.latency.async.p50ms);
    const worstP99 = Math.max(result.latency.sync.p99ms, result.latency.async.p99ms);
    result.met = { p50: worstP50 < 50, p99: worstP99 < 250 };
    printWebhookBench(result);
    return result;
  } finally {
    await agent.close();
    await stack.stop();
    await receiver.close();
    await echo.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export function printWebhookBench(r: WebhookBenchResult): void {
  console.log(`\nwebhook delivery: run completion -> receiver has the POST (loopback receiver, signed, ${r.options.rate} runs/s for ${r.options.seconds}s)`);
  console.log(formatTable(['runs', 'delivered', 'p50 ms', 'p99 ms', 'max ms'], [
    ['sync', r.latency.sync.delivered, r.latency.sync.p50ms, r.latency.sync.p99ms, r.latency.sync.maxMs],
    ['async', r.latency.async.delivered, r.latency.async.p50ms, r.latency.async.p99ms, r.latency.async.maxMs],
    ['async, from the app answer', r.latency.asyncFromAppAnswer.delivered, r.latency.asyncFromAppAnswer.p50ms, r.latency.asyncFromAppAnswer.p99ms, r.latency.asyncFromAppAnswer.maxMs],
    ['floor (emptied steps), from outcome', r.floor.fromOutcome.delivered, r.floor.fromOutcome.p50ms, r.floor.fromOutcome.p99ms, r.floor.fromOutcome.maxMs],
    ['floor (emptied steps), from answer', r.floor.fromAnswer.delivered, r.floor.fromAnswer.p50ms, r.floor.fromAnswer.p99ms, r.floor.fromAnswer.maxMs],
  ].map((row) => row.map((c) => (typeof c === 'number' ? c : String(c))))));
  console.log(`  deliveries/s (burst of ${r.throughput.runs} sync runs, ${r.options.concurrency} callers): ${r.throughput.deliveredPerSecond} over ${r.throughput.seconds} s`);
  console.log(`  p50 target < 50 ms ${r.met.p50 ? 'MET' : 'MISSED'}; p99 target < 250 ms ${r.met.p99 ? 'MET' : 'MISSED'}`);
}
