import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import protobufs from '@temporalio/proto';
import { verifyWebhook } from '../../lib/verify-webhook.js';
import { sealWebhookSecret } from '../../lib/webhook-secret-box.js';
import { webhooksRepository } from '../../db/repositories/webhooks.js';
import { buildFastifyReceiver, type RunWebhook } from '../../examples/webhook-receivers/fastify-receiver.js';
import { authHeaders, waitFor } from '../helpers/stack.js';
import { useWebhookStack } from '../helpers/webhook-stack.js';

const ctx = useWebhookStack();

function run(body: unknown, opts: { endpoint: string; async?: boolean; secret?: string }) {
  const q = new URLSearchParams({ webhookEndpoint: opts.endpoint, ...(opts.async ? { async: 'true' } : {}) });
  return fetch(`${ctx.stack.baseUrl}/v4/proj/echo/run?${q}`, {
    method: 'POST',
    headers: authHeaders(ctx.token, opts.secret ? { 'x-webhook-secret': opts.secret } : {}),
    body: JSON.stringify(body),
  });
}

const received = (endpoint: string, n = 1) => waitFor(async () => (ctx.receiver.to(endpoint).length >= n ? ctx.receiver.to(endpoint) : null), 30_000, 20);

async function webhookLog(runId: string, until: (log: any) => boolean = (l) => l.state !== 'pending') {
  return waitFor(async () => {
    const res = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}/webhook`, { headers: authHeaders(ctx.token) });
    const log = res.status === 200 ? await res.json() : null;
    return log && until(log) ? log : null;
  }, 30_000, 100);
}

/** The history exactly as the server stores it, without any codec: what the Web UI and an export see. */
async function rawHistory(workflowId: string): Promise<Buffer> {
  const proto = protobufs.temporal;
  const res = await ctx.stack.temporal.workflowService.getWorkflowExecutionHistory({ namespace: ctx.stack.config.temporalNamespace, execution: { workflowId } });
  return Buffer.from(proto.api.workflowservice.v1.GetWorkflowExecutionHistoryResponse.encode(res).finish());
}

describe('webhook delivery', () => {
  it('forwards a sync run: full body, X-Request-Id, content type, signature over the exact bytes', async () => {
    const secret = 'whsec_sync_Zx81';
    const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
    const res = await run({ hello: 'webhook' }, { endpoint, secret });
    expect(res.status).toBe(200);
    const runId = res.headers.get('x-run-id')!;
    const [req] = await received(endpoint);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-request-id']).toBe(runId);
    const ts = Number(req.headers['x-service-webhook-timestamp']);
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(10);
    expect(req.headers['x-service-webhook-signature']).toMatch(/^v1,[0-9a-f]{64}$/);
    expect(verifyWebhook({ secret, headers: req.headers, body: req.body })).toMatchObject({ ok: true, requestId: runId });
    expect(verifyWebhook({ secret: 'other', headers: req.headers, body: req.body }).ok).toBe(false);
    // An independent HMAC over the bytes as received: openssl.
    const content = Buffer.concat([Buffer.from(`${runId}.${ts}.`), req.body]);
    const openssl = /([0-9a-f]{64})\s*$/.exec(execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: content }).toString())![1];
    expect(req.headers['x-service-webhook-signature']).toBe(`v1,${openssl}`);

    const body = JSON.parse(req.body.toString());
    expect(body).toMatchObject({ run_id: runId, app_id: 'proj-echo', async: false, status: 'succeeded', status_code: 200, content_type: 'application/json' });
    expect(body.response.echo.hello).toBe('webhook');
    expect(typeof body.run_time_ms).toBe('number');
    expect(new Date(body.timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const log = await webhookLog(runId);
    expect(log).toMatchObject({ run_id: runId, endpoint, signed: true, state: 'delivered' });
    expect(log.deliveries[0].attempts).toMatchObject([{ attempt: 1, status_code: 200, outcome: 'delivered', error: null }]);
  });

  it("splices the app's JSON in byte for byte, and forwards other responses as strings", async () => {
    const bigInt = ctx.receiver.endpoint(() => ({ status: 200 }));
    await run({ raw: '{"n": 12345678901234567890}', content_type: 'application/json' }, { endpoint: bigInt });
    const text = ctx.receiver.endpoint(() => ({ status: 200 }));
    await run({ raw: 'plain words', content_type: 'text/plain' }, { endpoint: text });
    const [a] = await received(bigInt);
    expect(a.body.toString()).toMatch(/"response":\{"n": 12345678901234567890\}\}$/);
    const [b] = await received(text);
    expect(JSON.parse(b.body.toString())).toMatchObject({ content_type: 'text/plain', response: 'plain words' });
  });

  it('sends no signature headers without X-Webhook-Secret', async () => {
    const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
    const res = await run({ plain: true }, { endpoint });
    const [req] = await received(endpoint);
    expect(req.headers['x-request-id']).toBe(res.headers.get('x-run-id'));
    expect(req.headers['x-service-webhook-signature']).toBeUndefined();
    expect(req.headers['x-service-webhook-timestamp']).toBeUndefined();
    expect((await webhookLog(res.headers.get('x-run-id')!)).signed).toBe(false);
  });

  it('never delays the sync caller: a receiver taking 4 s gets the POST after the caller has its answer', async () => {
    const endpoint = ctx.receiver.endpoint(() => ({ status: 200, delayMs: 4_000 }));
    const t0 = Date.now();
    const res = await run({ quick: true }, { endpoint });
    await res.json();
    const answeredAt = Date.now();
    expect(answeredAt - t0).toBeLessThan(1_000);
    const [req] = await received(endpoint);
    expect(req.at).toBeGreaterThanOrEqual(answeredAt - 50);
    expect((await webhookLog(res.headers.get('x-run-id')!)).state).toBe('delivered');
  });

  it('forwards a failed sync run too (the app answered 500): the caller still gets the 500', async () => {
    const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
    const res = await run({ status: 500 }, { endpoint });
    expect(res.status).toBe(500);
    const [req] = await received(endpoint);
    expect(JSON.parse(req.body.toString())).toMatchObject({ status: 'failure', status_code: 500 });
  });

  it('delivers an async run from a child workflow webhook-<run_id> that outlives the run', async () => {
    const secret = 'whsec_async_Q9';
    const endpoint = ctx.receiver.endpoint(() => ({ status: 202 }));
    const res = await run({ async: 'yes' }, { endpoint, async: true, secret });
    expect(res.status).toBe(202);
    const { run_id: runId } = await res.json();
    const [req] = await received(endpoint);
    expect(verifyWebhook({ secret, headers: req.headers, body: req.body }).ok).toBe(true);
    expect(JSON.parse(req.body.toString())).toMatchObject({ run_id: runId, async: true, status: 'succeeded', status_code: 200, response: { echo: { async: 'yes' } } });
    const child = await ctx.stack.temporal.workflow.getHandle(`webhook-${runId}`).describe();
    expect(child.type).toBe('deliverWebhookWorkflow');
    expect(child.parentExecution?.workflowId).toBe(runId);
    expect(child.taskQueue).toBe(ctx.stack.config.taskQueues.webhooks);
    const log = await webhookLog(runId);
    expect(log.state).toBe('delivered');
    const view = await (await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}`, { headers: authHeaders(ctx.token) })).json();
    expect(view.webhook).toEqual({ state: 'delivered', attempts: 1 });
  });

  it('reports a cancelled async run through its webhook', async () => {
    const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
    const { run_id: runId } = await (await run({ sleep_ms: 10_000 }, { endpoint, async: true })).json();
    expect((await webhookLog(runId, () => true)).state).toBe('pending');
    await waitFor(async () => ctx.echo.calls.some((c) => c.requestId === runId));
    const cancel = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}/cancel`, { method: 'POST', headers: authHeaders(ctx.token), body: '' });
    expect(cancel.status).toBe(202);
    const [req] = await received(endpoint);
    expect(JSON.parse(req.body.toString())).toMatchObject({ run_id: runId, status: 'cancelled', status_code: null, response: null, error: 'run cancelled' });
  });

  it('keeps X-Webhook-Secret out of Temporal history (raw bytes) and PostgreSQL', async () => {
    const secret = `whsec_${'S3cr3t'.repeat(4)}`;
    const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
    const { run_id: runId } = await (await run({ secret_test: 1 }, { endpoint, async: true, secret })).json();
    await received(endpoint);
    await webhookLog(runId);
    for (const workflowId of [runId, `webhook-${runId}`]) {
      const raw = await rawHistory(workflowId);
      expect(raw.length).toBeGreaterThan(500);
      expect(raw.includes(secret)).toBe(false);
      expect(raw.includes(Buffer.from(secret).toString('base64'))).toBe(false);
      // Payloads are encrypted by the codec: not even the endpoint is readable.
      expect(raw.includes('binary/encrypted')).toBe(true);
      expect(raw.includes(endpoint)).toBe(false);
    }
    // Every row of every table, as text: the secret is nowhere in the database.
    const { rows: tables } = await ctx.stack.pool.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
    for (const { tablename } of tables) {
      const { rows } = await ctx.stack.pool.query(`SELECT t::text AS row FROM ${tablename} t`);
      for (const { row } of rows) expect(row as string, tablename).not.toContain(secret);
    }
    const { rows } = await ctx.stack.pool.query('SELECT secret_sealed FROM webhook_deliveries WHERE run_id = $1', [runId]);
    expect(rows[0].secret_sealed.includes(Buffer.from(secret))).toBe(false);
  });
});

describe('receivers and recovery', () => {
  it('the Fastify receiver example accepts a real signed delivery', async () => {
    const secret = 'whsec_example_e2e';
    const got: RunWebhook[] = [];
    const example = buildFastifyReceiver({ secret, onRun: (r) => void got.push(r) });
    await example.listen({ host: '127.0.0.1', port: 0 });
    try {
      const endpoint = `http://127.0.0.1:${(example.server.address() as AddressInfo).port}/webhooks/runhook`;
      const res = await run({ to: 'example' }, { endpoint, secret });
      const runId = res.headers.get('x-run-id')!;
      const log = await webhookLog(runId);
      expect(log.deliveries[0].attempts).toMatchObject([{ status_code: 204, outcome: 'delivered' }]);
      expect(got).toMatchObject([{ run_id: runId, status: 'succeeded', response: { echo: { to: 'example' } } }]);
    } finally {
      await example.close();
    }
  });

  it('re-drives a recorded delivery whose workflow never started (API died after the outbox write)', async () => {
    const endpoint = ctx.receiver.endpoint(() => ({ status: 200 }));
    const runId = `redrive-${Date.now()}`;
    await ctx.stack.pool.query(
      `INSERT INTO runs (run_id, app_id, project_id, app_name, async, status, created_at, finished_at, run_time_ms, status_code, webhook_endpoint)
       VALUES ($1, 'proj-echo', 'proj', 'echo', false, 'succeeded', now() - interval '1 minute', now() - interval '1 minute', 5, 200, $2)`,
      [runId, endpoint],
    );
    await webhooksRepository(ctx.stack.pool).createFirstDelivery({ runId, endpoint, secretSealed: sealWebhookSecret(ctx.stack.config.payloadCodecKey, runId, 'whsec_redrive') });
    await ctx.stack.pool.query("UPDATE webhook_deliveries SET created_at = now() - interval '1 minute' WHERE run_id = $1", [runId]);
    expect(await ctx.stack.api.webhooks.outbox.redrive()).toBe(1);
    const [req] = await received(endpoint);
    expect(verifyWebhook({ secret: 'whsec_redrive', headers: req.headers, body: req.body }).ok).toBe(true);
    expect(JSON.parse(req.body.toString())).toMatchObject({ run_id: runId, status: 'succeeded', status_code: 200, response: null });
    expect((await webhookLog(runId)).state).toBe('delivered');
    expect(await ctx.stack.api.webhooks.outbox.redrive()).toBe(0);
  });
});

describe('delivery log and redelivery', () => {
  it('redelivers the same body with the same X-Request-Id, as a new delivery with its own attempts', async () => {
    const secret = 'whsec_redeliver';
    const endpoint = ctx.receiver.endpoint((n) => ({ status: n <= 3 ? 404 : 200 }));
    const res = await run({ again: true }, { endpoint, secret });
    const runId = res.headers.get('x-run-id')!;
    // While delivery 0 is still retrying, a redelivery is refused.
    await received(endpoint, 1);
    const early = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}/webhook/redeliver`, { method: 'POST', headers: authHeaders(ctx.token), body: '' });
    expect(early.status).toBe(409);
    const failed = await webhookLog(runId);
    expect(failed.state).toBe('failed');
    expect(failed.deliveries[0].attempts).toHaveLength(3);

    const again = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}/webhook/redeliver`, { method: 'POST', headers: authHeaders(ctx.token), body: '' });
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual({ run_id: runId, delivery: 1, workflow_id: `webhook-${runId}-1`, state: 'pending' });
    const seen = await received(endpoint, 4);
    expect(seen[3].headers['x-request-id']).toBe(runId);
    expect(seen[3].body.equals(seen[0].body)).toBe(true);
    expect(verifyWebhook({ secret, headers: seen[3].headers, body: seen[3].body }).ok).toBe(true);
    const log = await webhookLog(runId, (l) => l.deliveries.length === 2 && l.state !== 'pending');
    expect(log.state).toBe('delivered');
    expect(log.deliveries.map((d: any) => [d.delivery, d.state, d.attempts.length])).toEqual([[0, 'failed', 3], [1, 'delivered', 1]]);
    expect(log.deliveries[1].attempts[0]).toMatchObject({ attempt: 1, status_code: 200, outcome: 'delivered' });
  });

  it('answers 404 for a run without a webhook and for another project', async () => {
    const res = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/run`, { method: 'POST', headers: authHeaders(ctx.token), body: '{}' });
    const runId = res.headers.get('x-run-id')!;
    await ctx.stack.api.runLog.flush();
    for (const [method, suffix] of [['GET', ''], ['POST', '/redeliver']]) {
      const r = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}/webhook${suffix}`, { method, headers: authHeaders(ctx.token), ...(method === 'POST' ? { body: '' } : {}) });
      expect(r.status).toBe(404);
      expect((await r.json()).message).toMatch(/no webhook/);
    }
    const other = await ctx.stack.token('other');
    const r = await fetch(`${ctx.stack.baseUrl}/v4/proj/echo/runs/${runId}/webhook`, { headers: authHeaders(other) });
    expect(r.status).toBe(403);
  });
});
