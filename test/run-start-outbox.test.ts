import { afterAll, beforeAll, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { acceptAsyncRun } from '../api/run-launcher.js';
import { runsRepository } from '../db/repositories/runs.js';
import { authHeaders, startStack, waitFor, type Stack } from './helpers/stack.js';

let stack: Stack;
let echo: EchoApp;

beforeAll(async () => {
  stack = await startStack({ worker: true });
  echo = await startEchoApp();
});
afterAll(async () => {
  await echo?.close();
  await stack?.close();
});

it('answers 202 before the workflow exists, then starts it and marks the start', async () => {
  await stack.deploy('proj', { name: 'echo', url: echo.url });
  const token = await stack.token('proj');
  const res = await fetch(`${stack.baseUrl}/v4/proj/echo/run?async=true`, { method: 'POST', headers: authHeaders(token), body: '{"outbox":1}' });
  expect(res.status).toBe(202);
  const { run_id: runId } = (await res.json()) as { run_id: string };
  const row = await waitFor(async () => {
    const { rows } = await stack.pool.query('SELECT workflow_started_at, start_spec FROM runs WHERE run_id = $1 AND workflow_started_at IS NOT NULL', [runId]);
    return rows[0] ?? null;
  }, 10_000, 50);
  expect(row.start_spec.input.runId).toBe(runId);
  expect(JSON.stringify(row.start_spec)).not.toMatch(/secret/i);
  await waitFor(async () => (await runsRepository(stack.pool).get(runId))?.status === 'succeeded', 20_000);
});

it('re-drives an accepted run whose start never happened (the accepting process died), exactly once', async () => {
  const app = await stack.deploy('proj', { name: 'echo', url: echo.url });
  const runId = uuidv7();
  // Exactly what an API does before its 202; the start that would follow is lost with the process.
  await acceptAsyncRun({ config: stack.config, runs: runsRepository(stack.pool) }, app, runId, Buffer.from('{"orphan":true}'), null);
  const run = await waitFor(async () => {
    const r = await runsRepository(stack.pool).get(runId);
    return r?.finishedAt ? r : null;
  }, 30_000, 200);
  expect(run.status).toBe('succeeded');
  expect(echo.calls.filter((c) => c.requestId === runId)).toHaveLength(1);
  expect(echo.calls.find((c) => c.requestId === runId)?.body).toEqual({ orphan: true });
  const { rows } = await stack.pool.query('SELECT workflow_started_at FROM runs WHERE run_id = $1', [runId]);
  expect(rows[0].workflow_started_at).not.toBeNull();
});
