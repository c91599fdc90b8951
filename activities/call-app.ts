import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Agent } from 'undici';
import { AppUnreachableError, callApp } from '../lib/app-client.js';
import type { RunsRepository } from '../db/repositories/runs.js';
import { APP_UNREACHABLE, type AppCallOutcome } from '../workflows/definitions.js';

export interface CallAppDeps {
  runs: RunsRepository;
  dispatcher: Agent;
}

export function makeCallAppActivity(deps: CallAppDeps) {
  /** Calls the app once; the response body goes to PostgreSQL and only its status returns to history. */
  return async function callAppActivity(input: { runId: string; url: string }): Promise<AppCallOutcome> {
    const ctx = Context.current();
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
      return { statusCode: res.statusCode, runTimeMs };
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
