import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { runsRepository } from '../db/repositories/runs.js';
import { authHeaders, startStack, waitFor, type Stack } from './helpers/stack.js';
import { startService } from './helpers/processes.js';

let stack: Stack;
let echo: EchoApp;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  echo = await startEchoApp();
  await stack.deploy('proj', { name: 'echo', url: echo.url });
});
afterAll(async () => {
  await echo?.close();
  await stack?.close();
});

it('finishes a run on a second worker after the first is killed with SIGKILL mid-call', async () => {
  const first = await startService('worker/main.ts', stack.env, /worker started/);
  const token = await stack.token('proj');
  const res = await fetch(`${stack.baseUrl}/v4/proj/echo/run?async=true`, {
    method: 'POST',
    headers: authHeaders(token),
    body: JSON.stringify({ sleep_ms: 1500, job: 'crash-test' }),
  });
  const { run_id: runId } = await res.json();
  // The first worker has the call in flight at the app.
  await waitFor(async () => echo.calls.some((c) => c.requestId === runId), 20_000);
  expect(await first.kill('SIGKILL')).toBeNull();

  await stack.startWorkers();
  const runs = runsRepository(stack.pool);
  const run = await waitFor(async () => {
    const r = await runs.get(runId);
    return r?.finishedAt ? r : null;
  }, 45_000);
  expect(run.status).toBe('succeeded');
  expect(run.statusCode).toBe(200);
  // The retried call carried the same X-Request-Id, so the app could deduplicate it.
  const calls = echo.calls.filter((c) => c.requestId === runId);
  expect(calls.length).toBe(2);
  expect(calls[1].body).toEqual({ sleep_ms: 1500, job: 'crash-test' });
  const history = await stack.temporal.workflow.getHandle(runId).fetchHistory();
  const attempts = history.events!.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 0);
  expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
}, 90_000);
