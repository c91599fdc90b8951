import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { freePort, startDevServer, type DevServer } from '../../scripts/temporal-dev-server.js';
import { authHeaders, startStack, waitFor, type Stack } from '../helpers/stack.js';

// A Temporal dev server of this test's own, stopped and started again on the same --db-filename
// while async runs are in flight at the app.
const RUNS = 12;
let dir: string;
let server: DevServer;
let port: number;
let stack: Stack;
let echo: EchoApp;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-fault-temporal-'));
  port = await freePort();
  server = await startDevServer({ binary: inject('temporalCliPath'), port, dbFile: path.join(dir, 'temporal.sqlite') });
  stack = await startStack({ worker: true, env: { TEMPORAL_ADDRESS: server.address } });
  echo = await startEchoApp();
  await stack.deploy('proj', { name: 'echo', url: echo.url });
}, 90_000);
afterAll(async () => {
  await echo?.close();
  await stack?.close();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

it('resumes and finishes in-flight runs after the Temporal server restarts on its database', async () => {
  const token = await stack.token('proj');
  const runIds = await Promise.all(
    Array.from({ length: RUNS }, async (_, i) => {
      const res = await fetch(`${stack.baseUrl}/v4/proj/echo/run?async=true`, { method: 'POST', headers: authHeaders(token), body: JSON.stringify({ sleep_ms: 3000, i }) });
      expect(res.status).toBe(202);
      return ((await res.json()) as { run_id: string }).run_id;
    }),
  );
  await waitFor(async () => new Set(echo.calls.map((c) => c.requestId)).size === RUNS, 30_000);
  await server.stop();
  // Down for a moment while the app calls finish: their completions cannot reach the server.
  await new Promise((r) => setTimeout(r, 1500));
  server = await startDevServer({ binary: inject('temporalCliPath'), port, dbFile: path.join(dir, 'temporal.sqlite') });

  await waitFor(async () => {
    const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM runs WHERE run_id = ANY($1::text[]) AND finished_at IS NOT NULL', [runIds]);
    return rows[0].n === RUNS;
  }, 90_000, 250);
  const { rows } = await stack.pool.query('SELECT status, count(*)::int AS n FROM runs WHERE run_id = ANY($1::text[]) GROUP BY status', [runIds]);
  const completed = rows.find((r) => r.status === 'succeeded')?.n ?? 0;
  const { rows: [events] } = await stack.pool.query('SELECT count(*)::int AS n FROM request_events WHERE async');
  const figures = { submitted: RUNS, completed, duplicated: events.n - RUNS, lost: RUNS - completed };
  console.log(`fault: Temporal restart ${JSON.stringify(figures)}`);
  expect(figures).toMatchObject({ completed: RUNS, duplicated: 0, lost: 0 });
  // The outcome row is written inside the workflow's last task, a moment before the workflow closes.
  const statuses = async () => (await Promise.all(runIds.map((id) => stack.temporal.workflow.getHandle(id).describe()))).map((d) => d.status.name);
  await waitFor(async () => (await statuses()).every((s) => s === 'COMPLETED'), 30_000, 250).catch(() => {});
  expect(await statuses()).toEqual(Array(RUNS).fill('COMPLETED'));
}, 180_000);
