import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { freePort } from '../../scripts/temporal-dev-server.js';
import { authHeaders, startStack, waitFor, type Stack } from '../helpers/stack.js';
import { startService, type ChildService } from '../helpers/processes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

let stack: Stack;
let echo: EchoApp;
let receiver: WebhookReceiver;
let worker: ChildService;
let api: ChildService;
let apiUrl: string;
let workerMetricsUrl: string;
let token: string;

// Real processes, as deployed: the API's and the worker's own entry points, logging JSON to stdout.
beforeAll(async () => {
  stack = await startStack({ worker: false });
  echo = await startEchoApp();
  receiver = await startWebhookReceiver();
  token = await stack.token('proj');
  await stack.deploy('proj', { name: 'echo', url: echo.url });
  const [workerPort, apiPort] = [await freePort(), await freePort()];
  workerMetricsUrl = `http://127.0.0.1:${workerPort}/metrics`;
  apiUrl = `http://127.0.0.1:${apiPort}`;
  worker = await startService('worker/main.ts', { ...stack.env, WORKER_METRICS_ADDRESS: `127.0.0.1:${workerPort}` }, /worker started/);
  api = await startService('api/server.ts', { ...stack.env, PORT: String(apiPort), LOG_LEVEL: 'info' }, /Server listening/);
}, 90_000);
afterAll(async () => {
  await api?.kill('SIGTERM');
  await worker?.kill('SIGTERM');
  await receiver?.close();
  await echo?.close();
  await stack?.close();
});

/** The value of one Prometheus series, matched by name and a label substring. */
function sample(text: string, name: string, labels = ''): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const m = /^([^{\s]+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name && (m[2] ?? '').includes(labels)) return Number(m[3]);
  }
  return null;
}

describe('observability of real API and worker processes', () => {
  it('counts requests by route template and status, runs started, event buffer and drops at the API /metrics', async () => {
    const run = (q: string) => fetch(`${apiUrl}/v4/proj/echo/run${q}`, { method: 'POST', headers: authHeaders(token), body: '{"n":1}' });
    expect((await run('')).status).toBe(200);
    expect((await run('')).status).toBe(200);
    expect((await run('?async=true')).status).toBe(202);
    expect((await fetch(`${apiUrl}/v4/proj/nope/run`, { method: 'POST', headers: authHeaders(token), body: '{}' })).status).toBe(404);
    const res = await fetch(`${apiUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const route = 'route="/v4/:project_id/:app_name/run"';
    expect(sample(text, 'runhook_http_requests_total', `${route},status_code="200"`)).toBe(2);
    expect(sample(text, 'runhook_http_requests_total', `${route},status_code="202"`)).toBe(1);
    expect(sample(text, 'runhook_http_requests_total', `${route},status_code="404"`)).toBe(1);
    expect(sample(text, 'runhook_http_request_duration_seconds_count', `${route},status_code="200"`)).toBe(2);
    expect(sample(text, 'runhook_runs_started_total', 'mode="sync"')).toBe(2);
    expect(sample(text, 'runhook_runs_started_total', 'mode="async"')).toBe(1);
    expect(sample(text, 'runhook_event_buffer_depth')).not.toBeNull();
    expect(sample(text, 'runhook_events_dropped_total')).toBe(0);
    expect(sample(text, 'runhook_events_rejected_total')).toBe(0);
    // Raw URLs never become labels.
    expect(text).not.toContain('/v4/proj/');
  });

  it('serves Core runtime metrics plus app-call latency and webhook deliveries by outcome at the worker /metrics', async () => {
    const ok = receiver.endpoint(() => ({ status: 200 }));
    const refused = receiver.endpoint(() => ({ status: 400 }));
    for (const ep of [ok, refused]) {
      const res = await fetch(`${apiUrl}/v4/proj/echo/run?async=true&webhookEndpoint=${encodeURIComponent(ep)}`, { method: 'POST', headers: authHeaders(token), body: '{}' });
      expect(res.status).toBe(202);
    }
    const text = await waitFor(async () => {
      const t = await (await fetch(workerMetricsUrl)).text();
      return /runhook_webhook_deliveries\S*\{[^}]*outcome="failed"/.test(t) && /runhook_webhook_deliveries\S*\{[^}]*outcome="delivered"/.test(t) ? t : null;
    }, 30_000, 250);
    expect(text).toMatch(/runhook_app_call_latency\S*_count\{[^}]*status_class="2xx"[^}]*\} [1-9]/);
    expect(text).toMatch(/temporal_worker_task_slots_available\{/);
    expect(text).toMatch(/service="runhook-worker"/);
  });

  it('logs JSON lines that carry the run id on every line about a run', async () => {
    const res = await fetch(`${apiUrl}/v4/proj/echo/run`, { method: 'POST', headers: authHeaders(token), body: '{"log":1}' });
    const runId = res.headers.get('x-run-id')!;
    await new Promise((r) => setTimeout(r, 300));
    const lines = api.output().split('\n').filter((l) => l.includes(runId));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line).run_id).toBe(runId);
    // The worker's line about a failed delivery (from the previous test) is JSON with run_id too.
    const failed = worker.output().split('\n').filter((l) => l.includes('webhook delivery failed'));
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed) expect(JSON.parse(line).run_id).toMatch(/^[0-9a-f-]{36}$/);

    // The SDK's own lines about a run (an app that cannot be reached fails its activity) as well.
    await stack.deploy('proj', { name: 'gone', url: 'http://127.0.0.1:1/run' });
    const gone = await fetch(`${apiUrl}/v4/proj/gone/run?async=true`, { method: 'POST', headers: authHeaders(token), body: '{}' });
    const goneId = ((await gone.json()) as { run_id: string }).run_id;
    const about = await waitFor(async () => {
      const l = worker.output().split('\n').filter((x) => x.includes(goneId));
      return l.length ? l : null;
    }, 20_000, 200);
    for (const line of about) expect(JSON.parse(line)).toMatchObject({ run_id: goneId });
    // Every line the worker printed is JSON.
    for (const line of worker.output().split('\n').filter((l) => l.trim())) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
