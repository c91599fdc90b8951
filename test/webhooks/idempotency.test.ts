import { expect, it } from 'vitest';
import { authHeaders, waitFor } from '../helpers/stack.js';
import { useWebhookStack } from '../helpers/webhook-stack.js';

// Idempotency-Key on sync runs with a webhook: a retried call neither runs the app again nor makes
// the receiver see a second run.
const ctx = useWebhookStack();

const run = (endpoint: string, key: string, body: unknown) =>
  fetch(`${ctx.stack.baseUrl}/v4/proj/echo/run?webhookEndpoint=${encodeURIComponent(endpoint)}`, {
    method: 'POST', headers: authHeaders(ctx.token, { 'idempotency-key': key }), body: JSON.stringify(body),
  });

it('replays the first answer for the same key and body, refuses another body, and delivers once', async () => {
  const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
  const first = await run(endpoint, 'sync-key-1', { n: 1 });
  expect(first.status).toBe(200);
  const runId = first.headers.get('x-run-id')!;
  const firstBody = await first.text();
  // The sync run's row lands just after its response; from then on the key replays it.
  await waitFor(async () => (await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}`, { headers: authHeaders(ctx.token) })).status === 200);

  const again = await run(endpoint, 'sync-key-1', { n: 1 });
  expect(again.status).toBe(200);
  expect(again.headers.get('x-run-id')).toBe(runId);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(await again.text()).toBe(firstBody);

  const other = await run(endpoint, 'sync-key-1', { n: 2 });
  expect(other.status).toBe(409);
  expect((await other.json()).message).toMatch(/different body/);

  await waitFor(async () => ctx.receiver.to(endpoint).length >= 1);
  await new Promise((r) => setTimeout(r, 500));
  expect(ctx.echo.calls.filter((c) => c.requestId === runId)).toHaveLength(1);
  expect(ctx.receiver.to(endpoint).map((r) => r.headers['x-request-id'])).toEqual([runId]);
});

it('runs the app once for 20 concurrent identical requests; the others are told it is in progress or get its answer', async () => {
  const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
  const answers = await Promise.all(Array.from({ length: 20 }, () => run(endpoint, 'sync-key-race', { sleep_ms: 300 })));
  const ids = new Set(answers.filter((a) => a.status === 200).map((a) => a.headers.get('x-run-id')));
  expect(ids.size).toBe(1);
  expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
  const [runId] = [...ids];
  expect(ctx.echo.calls.filter((c) => c.requestId === runId)).toHaveLength(1);
  expect(ctx.echo.calls.filter((c) => JSON.stringify(c.body) === JSON.stringify({ sleep_ms: 300 }))).toHaveLength(1);
  await waitFor(async () => ctx.receiver.to(endpoint).length >= 1);
  await new Promise((r) => setTimeout(r, 500));
  expect(ctx.receiver.to(endpoint)).toHaveLength(1);
});

it('ignores Idempotency-Key on a plain sync call (no webhook): each call runs', async () => {
  const call = () => fetch(`${ctx.stack.baseUrl}/v4/proj/echo/run`, { method: 'POST', headers: authHeaders(ctx.token, { 'idempotency-key': 'plain' }), body: '{"plain":1}' });
  const [a, b] = [await call(), await call()];
  expect(a.status).toBe(200);
  expect(b.status).toBe(200);
  expect(a.headers.get('x-run-id')).not.toBe(b.headers.get('x-run-id'));
});
