import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { authHeaders, startStack, waitFor, type Stack } from './helpers/stack.js';
import { runsRepository } from '../db/repositories/runs.js';

let stack: Stack;
let echo: EchoApp;
let token: string;

beforeAll(async () => {
  stack = await startStack({ worker: true });
  echo = await startEchoApp();
  token = await stack.token('proj');
  await stack.deploy('proj', { name: 'echo', url: echo.url });
  await stack.deploy('proj', { name: 'slow', url: echo.url, responseGracePeriod: 1 });
  await stack.deploy('proj', { name: 'gone', url: 'http://127.0.0.1:1/run' });
});
afterAll(async () => {
  await echo?.close();
  await stack?.close();
});

async function submit(app: string, body: unknown) {
  const res = await fetch(`${stack.baseUrl}/v4/proj/${app}/run?async=true`, { method: 'POST', headers: authHeaders(token), body: JSON.stringify(body) });
  return res;
}

async function finished(runId: string) {
  const runs = runsRepository(stack.pool);
  return waitFor(async () => {
    const r = await runs.get(runId);
    return r?.finishedAt ? r : null;
  }, 30_000);
}

describe('asynchronous run', () => {
  it('answers 202 with exactly {run_id} and completes in the background', async () => {
    const res = await submit('echo', { hello: 'world' });
    expect(res.status).toBe(202);
    const body = await res.json();
    expect(Object.keys(body)).toEqual(['run_id']);
    const runId = body.run_id as string;
    const run = await finished(runId);
    expect(run.status).toBe('succeeded');
    expect(run.statusCode).toBe(200);
    expect(run.async).toBe(true);
    // The app was called with the run id, and its body stored in PostgreSQL, not in history.
    expect(echo.calls.find((c) => c.requestId === runId)?.body).toEqual({ hello: 'world' });
    const stored = await runsRepository(stack.pool).response(runId);
    expect(JSON.parse(stored!.body.toString()).echo).toEqual({ hello: 'world' });
    const handle = stack.temporal.workflow.getHandle(runId);
    const result = await handle.result();
    expect(result).toMatchObject({ runId, status: 'succeeded', statusCode: 200 });
    const desc = await handle.describe();
    expect(desc.typedSearchAttributes.get({ name: 'RunStatus', type: 'KEYWORD' } as never)).toBe('succeeded');
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).not.toContain('world');
  });

  it('records an app error status as state failure with its status code', async () => {
    const { run_id } = await (await submit('echo', { status: 500 })).json();
    const run = await finished(run_id);
    expect(run.status).toBe('failure');
    expect(run.statusCode).toBe(500);
    expect(echo.calls.filter((c) => c.requestId === run_id)).toHaveLength(1); // never retried
  });

  it('records an unreachable app as failure without retrying', async () => {
    const { run_id } = await (await submit('gone', {})).json();
    const run = await finished(run_id);
    expect(run.status).toBe('failure');
    expect(run.statusCode).toBeNull();
    expect(run.error).toMatch(/unreachable|ECONNREFUSED/i);
  });

  it('ends a run past its response_grace_period as timed_out and aborts the app call', async () => {
    const { run_id } = await (await submit('slow', { sleep_ms: 8000 })).json();
    const run = await finished(run_id);
    expect(run.status).toBe('timed_out');
    expect(run.finishedAt!.getTime() - run.createdAt.getTime()).toBeLessThan(6000);
    await waitFor(async () => echo.calls.find((c) => c.requestId === run_id)?.disconnected, 10_000);
    expect(await runsRepository(stack.pool).response(run_id)).toBeNull();
  });

  it('carries bodies far larger than a Temporal payload', async () => {
    const big = { pad: 'y'.repeat(3 * 1024 * 1024) };
    const { run_id } = await (await submit('echo', big)).json();
    const run = await finished(run_id);
    expect(run.status).toBe('succeeded');
    const stored = await runsRepository(stack.pool).response(run_id);
    expect(stored!.body.length).toBeGreaterThan(3 * 1024 * 1024);
  });
});
