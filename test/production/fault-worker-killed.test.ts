import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { authHeaders, startStack, waitFor, type Stack } from '../helpers/stack.js';
import { startService, type ChildService } from '../helpers/processes.js';

// A fleet of two real worker processes; one is SIGKILLed with 50 async runs in flight.
const RUNS = 50;
let stack: Stack;
let echo: EchoApp;
const workers: ChildService[] = [];

beforeAll(async () => {
  stack = await startStack({ worker: false });
  echo = await startEchoApp();
  await stack.deploy('proj', { name: 'echo', url: echo.url });
  workers.push(...(await Promise.all([1, 2].map(() => startService('worker/main.ts', stack.env, /worker started/)))));
}, 90_000);
afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill('SIGTERM')));
  await echo?.close();
  await stack?.close();
});

it('completes every run exactly once after one of two workers is SIGKILLed mid-flight', async () => {
  const token = await stack.token('proj');
  const runIds = await Promise.all(
    Array.from({ length: RUNS }, async (_, i) => {
      const res = await fetch(`${stack.baseUrl}/v4/proj/echo/run?async=true`, { method: 'POST', headers: authHeaders(token), body: JSON.stringify({ sleep_ms: 2500, i }) });
      expect(res.status).toBe(202);
      return ((await res.json()) as { run_id: string }).run_id;
    }),
  );
  // Most calls are in flight at the app, spread over both workers.
  await waitFor(async () => new Set(echo.calls.map((c) => c.requestId)).size >= RUNS * 0.6, 30_000);
  expect(await workers[0].kill('SIGKILL')).toBeNull();

  const finished = await waitFor(async () => {
    const { rows } = await stack.pool.query('SELECT run_id, status FROM runs WHERE run_id = ANY($1::text[]) AND finished_at IS NOT NULL', [runIds]);
    return rows.length === RUNS ? rows : null;
  }, 60_000, 250);
  const completed = finished.filter((r) => r.status === 'succeeded').length;
  // One outcome per run: the async outcome writes exactly one request event in its transaction.
  const { rows: [events] } = await stack.pool.query('SELECT count(*)::int AS n FROM request_events WHERE async');
  const executions = await Promise.all(runIds.map(async (id) => {
    let n = 0;
    for await (const _ of stack.temporal.workflow.list({ query: `WorkflowId = '${id}'` })) n++;
    return n;
  }));
  const retriedCalls = runIds.filter((id) => echo.calls.filter((c) => c.requestId === id).length > 1).length;
  const figures = { submitted: RUNS, completed, duplicated: events.n - RUNS, lost: RUNS - completed, retriedCalls };
  console.log(`fault: worker SIGKILL ${JSON.stringify(figures)}`);
  expect(figures).toMatchObject({ completed: RUNS, duplicated: 0, lost: 0 });
  expect(executions.every((n) => n === 1)).toBe(true);
  // The killed worker really had calls in flight: they were retried (same X-Request-Id) elsewhere.
  expect(retriedCalls).toBeGreaterThan(0);
}, 120_000);
