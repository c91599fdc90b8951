import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Agent } from 'undici';
import { AppUnreachableError, callApp } from '../lib/app-client.js';
import type { Pool } from 'pg';
import type { RunRecord, RunsRepository } from '../db/repositories/runs.js';
import type { PriceTable } from '../db/metrics/cost.js';
import { recordOutcomeWithEvents } from '../db/run-outcome-store.js';
import { APP_UNREACHABLE, type AppCallInput, type AppCallOutcome } from '../workflows/definitions.js';

export interface CallAppDeps {
  runs: RunsRepository;
  dispatcher: Agent;
  pool: Pool;
  prices: PriceTable;
}

/** A run already finished, as the workflow should see it. */
const recordedOutcome = (run: RunRecord): AppCallOutcome => ({
  statusCode: run.statusCode,
  runTimeMs: run.runTimeMs ?? 0,
  ...(run.error ? { error: run.error } : {}),
  recorded: run.status,
});

export function makeCallAppActivity(deps: CallAppDeps) {
  /**
   * Calls the app once; the response body goes to PostgreSQL and only its status returns to history.
   * With `recordOutcome`, the answer is also recorded as the run's outcome (with its events) here,
   * so the workflow's next task can start the webhook delivery at once instead of first running a
   * bookkeeping activity; an attempt retried after that write returns it without calling again.
   */
  return async function callAppActivity(input: AppCallInput): Promise<AppCallOutcome> {
    const ctx = Context.current();
    if (input.recordOutcome) {
      const run = await deps.runs.get(input.runId);
      if (run?.finishedAt) return recordedOutcome(run);
    }
    const body = await deps.runs.requestBody(input.runId);
    if (!body) throw ApplicationFailure.nonRetryable(`request body of run ${input.runId} not found`, 'RunNotFound');
    // Heartbeats are how a lost worker is noticed and how cancellation reaches this attempt.
    const every = Math.max(200, Math.floor((ctx.info.heartbeatTimeoutMs ?? 30_000) / 3));
    const beat = setInterval(() => ctx.heartbeat({ attempt: ctx.info.attempt }), every);
    ctx.heartbeat({ attempt: ctx.info.attempt });
    const started = performance.now();
    try {
      const res = await callApp({ url: input.url, runId: input.runId, body, dispatcher: deps.dispatcher, signal: ctx.cancellationSignal });
      const runTimeMs = Math.round(performance.now() - started);
      // Served with the Core runtime's Prometheus metrics of the worker (WORKER_METRICS_ADDRESS).
      ctx.metricMeter
        .createHistogram('runhook_app_call_latency', 'int', 'ms', 'Time from calling an app to its full response')
        .record(runTimeMs, { status_class: `${Math.floor(res.statusCode / 100)}xx` });
      await deps.runs.storeResponse(input.runId, res.contentType, res.body);
      if (!input.recordOutcome) return { statusCode: res.statusCode, runTimeMs };
      const status = res.statusCode >= 200 && res.statusCode < 300 ? 'succeeded' : 'failure';
      const first = await recordOutcomeWithEvents(deps.pool, deps.prices, { runId: input.runId, status, statusCode: res.statusCode, runTimeMs, error: null });
      if (first) return { statusCode: res.statusCode, runTimeMs, recorded: status };
      // The workflow got there first (timed out or cancelled meanwhile): its outcome stands.
      const run = await deps.runs.get(input.runId);
      return run ? recordedOutcome(run) : { statusCode: res.statusCode, runTimeMs };
    } catch (err) {
      if (err instanceof AppUnreachableError) {
        throw ApplicationFailure.create({ message: err.message, type: APP_UNREACHABLE, nonRetryable: true, details: [{ runTimeMs: Math.round(performance.now() - started) }] });
      }
      throw err;
    } finally {
      clearInterval(beat);
    }
  };
}
