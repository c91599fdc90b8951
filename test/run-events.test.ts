import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { authHeaders, startStack, waitFor, type Stack } from './helpers/stack.js';

let stack: Stack;
let echo: EchoApp;
let token: string;

beforeAll(async () => {
  stack = await startStack({ worker: true });
  echo = await startEchoApp();
  token = await stack.token('proj');
  await stack.deploy('proj', { name: 'echo', url: echo.url, cpu: 2, memoryGb: 4 });
  await stack.deploy('proj', { name: 'gone', url: 'http://127.0.0.1:1/run' });
  await stack.deploy('proj', { name: 'gpu', url: echo.url, compute: 'AMPERE_A10', gpuCount: 1, cpu: 1, memoryGb: 1 });
});
afterAll(async () => {
  await echo?.close();
  await stack?.close();
});

const run = (app: string, body: unknown, async = false) =>
  fetch(`${stack.baseUrl}/v4/proj/${app}/run${async ? '?async=true' : ''}`, { method: 'POST', headers: authHeaders(token), body: JSON.stringify(body) });

async function metrics(appId: string) {
  const start = new Date(Date.now() - 3600_000);
  start.setUTCMinutes(0, 0, 0);
  const end = new Date(start.getTime() + 3 * 3600_000);
  const q = new URLSearchParams({ start: start.toISOString().replace('.000', ''), end: end.toISOString().replace('.000', ''), interval: 'hour' });
  const res = await fetch(`${stack.baseUrl}/v2/projects/proj/apps/${appId}/dashboard-metrics?${q}`, { headers: authHeaders(token) });
  expect(res.status).toBe(200);
  return res.json();
}

it('turns every run into a request event and a cost event, sync and async, with nothing dropped', async () => {
  expect((await run('echo', { status: 200 })).status).toBe(200);
  expect((await run('echo', { status: 404 })).status).toBe(404);
  expect((await run('echo', { status: 503 })).status).toBe(503);
  expect((await run('gone', {})).status).toBe(502);
  const { run_id } = await (await run('echo', { status: 500, sleep_ms: 300 }, true)).json();
  const { run_id: ok } = await (await run('gpu', { sleep_ms: 200 }, true)).json();

  const totals = await waitFor(async () => {
    const m = await metrics('proj-echo');
    return m.request_totals.total === 4 ? m : null;
  }, 20_000, 200);
  expect(totals.request_totals).toMatchObject({ total: 4, '2xx': 1, '4xx': 1, '5xx': 2, other: 0 });
  expect(totals.cost_totals.cpu_cost_cents).toBeGreaterThan(0);
  expect(totals.cost_totals.memory_cost_cents).toBeGreaterThan(0);
  expect(totals.cost_totals.gpu_cost_cents).toBe(0);

  const gone = await metrics('proj-gone');
  expect(gone.request_totals).toMatchObject({ total: 1, other: 1 });

  const gpu = await waitFor(async () => {
    const m = await metrics('proj-gpu');
    return m.request_totals.total === 1 ? m : null;
  }, 20_000, 200);
  expect(gpu.request_totals['2xx']).toBe(1);
  expect(gpu.cost_totals.gpu_cost_cents).toBeGreaterThan(0);
  expect(gpu.cost_totals.total_running_time_ms).toBeGreaterThanOrEqual(200);

  // The async run's event is flagged async and carries the internal call's status.
  const { rows } = await stack.pool.query('SELECT status, async FROM request_events WHERE app_id = $1 AND async', ['proj-echo']);
  expect(rows).toEqual([{ status: 500, async: true }]);
  expect(run_id).toBeTruthy();
  expect(ok).toBeTruthy();
  expect(stack.api.events.recorder.stats().dropped).toBe(0);
});
