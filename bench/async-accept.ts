import { Agent, request } from 'undici';
import { v7 as uuidv7 } from 'uuid';
import { createTemporalClient } from '../lib/temporal-client.js';
import { MAX_RUN_MS, SEARCH_ATTRIBUTES, type RunAppInput } from '../workflows/definitions.js';
import type { Client } from '@temporalio/client';
import type { BenchStack } from './bench-stack.js';
import { atFixedRate, atMaxRate, type LoadCell } from './load.js';

export interface AsyncAcceptOptions {
  stack: BenchStack;
  /** Where the deployed app answers (the worker calls it as the runs drain). */
  appUrl: string;
  apiName: string;
  seconds: number;
  warmupSeconds: number;
  rate: number;
  concurrency: number;
  log: (line: string) => void;
}

export interface AsyncAcceptResult {
  scenario: 'async';
  secondsPerCell: number;
  offeredRate: number;
  maxConcurrency: number;
  cells: Record<string, LoadCell>;
  ratios: { runVsRawMaxThroughput: number; runP99AtRateMs: number; rawP99AtRateMs: number; runP99AtRateWorkerPausedMs: number | null; commitP99AtRateWorkerPausedMs: number | null; commitP99AtRateMs: number | null };
  targets: { runVsRawMaxThroughput: string; runP99AtRateMs: string };
  met: { throughput: boolean; latency: boolean };
  drainSeconds: Record<string, number>;
}

const PROJECT = 'bench';
const APP = 'static';
const BODY = '{"input":"bench","n":1}';

/** Waits until no run workflow is open, so one phase's backlog does not load the next. */
async function drain(client: Client, taskQueue: string, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  const query = `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"`;
  while (Date.now() - t0 < timeoutMs) {
    const { count } = await client.workflow.count(query);
    if (count === 0) return (Date.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 500));
  }
  return NaN;
}

/**
 * Runs/s and latency of the 202 of /run?async=true against raw client.workflow.start of the same
 * workflow with the same options on the same server, while a worker drains the queue: at a fixed
 * offered rate and at max throughput (closed loop, `concurrency` callers).
 */
export async function runAsyncAcceptBench(o: AsyncAcceptOptions): Promise<AsyncAcceptResult> {
  const { stack, log } = o;
  const app = await stack.deploy(PROJECT, APP, o.appUrl);
  const token = await stack.token(PROJECT);
  const client = await createTemporalClient(stack.config);
  const agent = new Agent({ connections: o.concurrency, keepAliveTimeout: 30_000 });
  const runUrl = `${stack.apis[o.apiName]}/v4/${PROJECT}/${APP}/run?async=true`;
  const config = stack.config;
  const runTimeoutMs = Math.min(app.responseGracePeriod * 1000, config.runMaxSeconds * 1000, MAX_RUN_MS);

  // The same start as api/run-launcher.ts, minus what /run adds around it (HTTP, auth, the run row).
  const rawStart = async () => {
    const runId = uuidv7();
    const input: RunAppInput = {
      runId, projectId: PROJECT, appId: app.appId, appName: app.name, url: app.url, runTimeoutMs,
      heartbeatTimeoutMs: config.appCallHeartbeatMs, appCallTaskQueue: config.taskQueues.appCalls,
    };
    await client.workflow.start('runAppWorkflow', {
      workflowId: runId,
      taskQueue: config.taskQueues.runs,
      args: [input],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowExecutionTimeout: runTimeoutMs + 30 * 60 * 1000,
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.projectId, value: PROJECT },
        { key: SEARCH_ATTRIBUTES.appId, value: app.appId },
        { key: SEARCH_ATTRIBUTES.appName, value: app.name },
        { key: SEARCH_ATTRIBUTES.runStatus, value: 'queued' },
        { key: SEARCH_ATTRIBUTES.runAsync, value: true },
      ],
      staticSummary: `Run ${runId} of app ${app.appId}`,
      staticDetails: `Project ${PROJECT}, app ${app.name}, calls ${app.url} (grace ${app.responseGracePeriod}s)`,
    });
  };
  const apiStart = async (signal: AbortSignal) => {
    const res = await request(runUrl, {
      method: 'POST', body: BODY, dispatcher: agent, signal,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    const text = await res.body.text();
    if (res.statusCode !== 202) throw new Error(`/run?async=true answered ${res.statusCode}: ${text.slice(0, 200)}`);
  };

  const cells: Record<string, LoadCell> = {};
  const pausedCell = `/run?async=true @${o.rate}/s, worker paused`;
  // One committed INSERT of the bench's own, timed alongside a cell: the least a durable accept
  // can cost on this machine at that moment.
  const commitCell = `one PostgreSQL INSERT commit @${o.rate}/s, alongside (worker paused)`;
  const drainingCommitCell = `one PostgreSQL INSERT commit @${o.rate}/s, alongside (draining)`;
  await stack.pool.query('CREATE TABLE IF NOT EXISTS bench_commit_probe (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
  const commitProbe = async () => {
    await stack.pool.query('INSERT INTO bench_commit_probe DEFAULT VALUES');
  };
  const acceptsWithCommitProbe = async (probeCell: string) => {
    const [accept, commit] = await Promise.all([atFixedRate(o.rate, o.seconds, apiStart), atFixedRate(o.rate, o.seconds, commitProbe)]);
    cells[probeCell] = commit;
    return accept;
  };
  const rawAtRateCell = `raw workflow.start @${o.rate}/s`;
  const runAtRateCell = `/run?async=true @${o.rate}/s`;
  const rawMaxCell = `raw workflow.start max c=${o.concurrency}`;
  const runMaxCell = `/run?async=true max c=${o.concurrency}`;
  const drainSeconds: Record<string, number> = {};
  const settle = async (after: string) => {
    const s = await drain(client, config.taskQueues.runs, 180_000);
    drainSeconds[after] = s;
    if (Number.isNaN(s)) log(`async: runs started by "${after}" still open after 180 s; measuring on anyway`);
  };
  try {
    log(`async: warm-up ${o.warmupSeconds}s of each`);
    await atFixedRate(o.rate, o.warmupSeconds, rawStart);
    await atFixedRate(o.rate, o.warmupSeconds, apiStart);
    await settle('warm-up');
    const phases: [string, () => Promise<LoadCell>][] = [
      [rawAtRateCell, () => atFixedRate(o.rate, o.seconds, rawStart)],
      [runAtRateCell, () => acceptsWithCommitProbe(drainingCommitCell)],
    ];
    // The accept path alone: the worker is stopped (SIGSTOP) so nothing drains while the 202s are
    // measured; it continues afterwards and drains the backlog before the next cell. It comes before
    // the max-throughput cells, whose backlog can outlast the wait between cells.
    if (stack.workerPid) {
      const workerPid = stack.workerPid;
      phases.push([
        pausedCell,
        async () => {
          process.kill(workerPid, 'SIGSTOP');
          try {
            return await acceptsWithCommitProbe(commitCell);
          } finally {
            process.kill(workerPid, 'SIGCONT');
          }
        },
      ]);
    }
    phases.push(
      [rawMaxCell, () => atMaxRate(o.concurrency, o.seconds, rawStart)],
      [runMaxCell, () => atMaxRate(o.concurrency, o.seconds, apiStart)],
    );
    for (const [name, phase] of phases) {
      log(`async: ${name} for ${o.seconds}s`);
      cells[name] = await phase();
      if (cells[name].errors) log(`async: ${name}: ${cells[name].errors} errors, first: ${cells[name].firstError}`);
      await settle(name);
    }
  } finally {
    await agent.close();
    await client.connection.close();
  }
  const ratios = {
    runVsRawMaxThroughput: cells[runMaxCell].rps / cells[rawMaxCell].rps,
    runP99AtRateMs: cells[runAtRateCell].p99ms,
    rawP99AtRateMs: cells[rawAtRateCell].p99ms,
    runP99AtRateWorkerPausedMs: cells[pausedCell]?.p99ms ?? null,
    commitP99AtRateWorkerPausedMs: cells[commitCell]?.p99ms ?? null,
    commitP99AtRateMs: cells[drainingCommitCell]?.p99ms ?? null,
  };
  return {
    scenario: 'async',
    secondsPerCell: o.seconds,
    offeredRate: o.rate,
    maxConcurrency: o.concurrency,
    cells,
    ratios,
    targets: { runVsRawMaxThroughput: '>= 0.9', runP99AtRateMs: `< 25 at ${o.rate}/s` },
    met: { throughput: ratios.runVsRawMaxThroughput >= 0.9, latency: ratios.runP99AtRateMs < 25 },
    drainSeconds,
  };
}
