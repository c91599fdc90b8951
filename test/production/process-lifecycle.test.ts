import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { authHeaders, startStack, waitFor, type Stack } from '../helpers/stack.js';
import { startService } from '../helpers/processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs an entry point to its exit; resolves with its exit code and everything it printed. */
function runToExit(entry: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

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

describe('process start and stop', () => {
  it.each([
    ['api/server.ts', { PORT: '99999' }, /invalid PORT="99999": must be at most 65535/],
    ['worker/main.ts', { WORKER_APP_CALL_SLOTS: 'many' }, /invalid WORKER_APP_CALL_SLOTS="many": expected a number/],
    ['worker/main.ts', { WORKER_METRICS_ADDRESS: 'localhost' }, /invalid WORKER_METRICS_ADDRESS/],
    ['api/server.ts', { PAYLOAD_CODEC_KEY: 'c2hvcnQ=' }, /invalid PAYLOAD_CODEC_KEY/],
  ])('%s stops at start with a message naming the bad setting (%j)', async (entry, bad, message) => {
    const { code, output } = await runToExit(entry, { ...stack.env, ...bad });
    expect(code).not.toBe(0);
    expect(output).toMatch(message);
    // A message, not a stack trace.
    expect(output).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('a worker on SIGTERM finishes the app call it has in flight within the grace time, then exits 0', async () => {
    const worker = await startService('worker/main.ts', { ...stack.env, WORKER_SHUTDOWN_GRACE_MS: '10000' }, /worker started/);
    const token = await stack.token('proj');
    const res = await fetch(`${stack.baseUrl}/v4/proj/echo/run?async=true`, { method: 'POST', headers: authHeaders(token), body: JSON.stringify({ sleep_ms: 1500 }) });
    const { run_id: runId } = (await res.json()) as { run_id: string };
    await waitFor(async () => echo.calls.some((c) => c.requestId === runId), 20_000);
    const started = Date.now();
    expect(await worker.kill('SIGTERM')).toBe(0);
    const tookMs = Date.now() - started;
    // The call was finished by this worker before it left: one call at the app, its response stored.
    const { rows } = await stack.pool.query('SELECT status_code FROM run_payloads p JOIN runs r USING (run_id) WHERE run_id = $1 AND kind = $2', [runId, 'response']);
    expect(rows).toHaveLength(1);
    expect(echo.calls.filter((c) => c.requestId === runId)).toHaveLength(1);
    expect(tookMs).toBeLessThan(10_000);
    // A second worker picks up the rest of the workflow (the outcome bookkeeping) and closes the run.
    const second = await startService('worker/main.ts', stack.env, /worker started/);
    try {
      const run = await waitFor(async () => {
        const { rows: r } = await stack.pool.query('SELECT status, status_code FROM runs WHERE run_id = $1 AND finished_at IS NOT NULL', [runId]);
        return r[0] ?? null;
      }, 30_000, 200);
      expect(run).toMatchObject({ status: 'succeeded', status_code: 200 });
      expect(echo.calls.filter((c) => c.requestId === runId)).toHaveLength(1);
    } finally {
      await second.kill('SIGTERM');
    }
  }, 90_000);
});
