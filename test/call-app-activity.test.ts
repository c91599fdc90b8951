import { afterAll, beforeAll, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { v7 as uuidv7 } from 'uuid';
import type { Pool } from 'pg';
import { createPool } from '../db/pool.js';
import { appsRepository, type App } from '../db/repositories/apps.js';
import { runsRepository } from '../db/repositories/runs.js';
import { DEFAULT_PRICES } from '../db/metrics/cost.js';
import { createAppDispatcher } from '../lib/app-client.js';
import { buildRunStart } from '../lib/run-start.js';
import { loadConfig } from '../config/config.js';
import { makeCallAppActivity } from '../activities/call-app.js';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

let db: TestDatabase;
let pool: Pool;
let echo: EchoApp;
let app: App;
const dispatcher = createAppDispatcher();

beforeAll(async () => {
  db = await createTestDatabase();
  pool = createPool(db.url, 4);
  echo = await startEchoApp();
  app = await appsRepository(pool).upsert('proj', { name: 'echo', url: echo.url, cpu: 2, memoryGb: 4, compute: 'CPU', gpuCount: 0, responseGracePeriod: 900 });
});
afterAll(async () => {
  await dispatcher.close();
  await echo?.close();
  await pool?.end();
  await db?.drop();
});

async function acceptedRun(body: unknown): Promise<string> {
  const runId = uuidv7();
  const runs = runsRepository(pool);
  const spec = buildRunStart(loadConfig({ DATABASE_URL: db.url }), app, runId, null);
  await runs.createAccepted({ runId, appId: app.appId, projectId: 'proj', appName: 'echo', async: true, requestBody: Buffer.from(JSON.stringify(body)), webhookEndpoint: null }, spec, null);
  return runId;
}

const events = async (runId: string) => {
  const { rows } = await pool.query(
    `SELECT (SELECT count(*)::int FROM request_events WHERE app_id = $1) AS requests, (SELECT count(*)::int FROM cost_events WHERE app_id = $1) AS costs,
            (SELECT status FROM runs WHERE run_id = $2), (SELECT status_code FROM runs WHERE run_id = $2)`,
    [app.appId, runId],
  );
  return rows[0];
};

it('records the app answer as the outcome with its events, and a retried attempt returns it without calling the app again', async () => {
  await pool.query('TRUNCATE request_events, cost_events');
  const activity = makeCallAppActivity({ runs: runsRepository(pool), dispatcher, pool, prices: DEFAULT_PRICES });
  const runId = await acceptedRun({ status: 201 });
  const env = new MockActivityEnvironment();
  const first = await env.run(activity, { runId, url: echo.url, recordOutcome: true });
  expect(first).toMatchObject({ statusCode: 201, recorded: 'succeeded' });
  expect(await events(runId)).toEqual({ requests: 1, costs: 1, status: 'succeeded', status_code: 201 });
  const callsBefore = echo.calls.filter((c) => c.requestId === runId).length;
  expect(callsBefore).toBe(1);

  // The same activity again, as after a worker lost between the write and the completion.
  const again = await new MockActivityEnvironment().run(activity, { runId, url: echo.url, recordOutcome: true });
  expect(again).toMatchObject({ statusCode: 201, recorded: 'succeeded' });
  expect(echo.calls.filter((c) => c.requestId === runId).length).toBe(1);
  expect(await events(runId)).toEqual({ requests: 1, costs: 1, status: 'succeeded', status_code: 201 });
});

it('keeps an outcome the workflow recorded first (timed out) and reports that one', async () => {
  await pool.query('TRUNCATE request_events, cost_events');
  const runs = runsRepository(pool);
  const activity = makeCallAppActivity({ runs, dispatcher, pool, prices: DEFAULT_PRICES });
  const runId = await acceptedRun({ status: 200, sleep_ms: 300 });
  const pending = new MockActivityEnvironment().run(activity, { runId, url: echo.url, recordOutcome: true });
  // The workflow's timer fires while the app is still answering: its outcome lands first.
  await new Promise((r) => setTimeout(r, 100));
  await runs.finish({ runId, status: 'timed_out', statusCode: null, runTimeMs: null, error: 'run exceeded 100 ms' });
  expect(await pending).toMatchObject({ statusCode: null, recorded: 'timed_out' });
  expect(await events(runId)).toMatchObject({ status: 'timed_out', status_code: null });
});

it('without recordOutcome (older workflows) only stores the answer', async () => {
  const activity = makeCallAppActivity({ runs: runsRepository(pool), dispatcher, pool, prices: DEFAULT_PRICES });
  const runId = await acceptedRun({ status: 500 });
  const out = await new MockActivityEnvironment().run(activity, { runId, url: echo.url });
  expect(out).toEqual({ statusCode: 500, runTimeMs: expect.any(Number) });
  expect((await events(runId)).status).toBe('queued');
});
