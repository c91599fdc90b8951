import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../lib/verify-webhook.js';
import { signatureHeaders, webhookSignature } from '../../lib/webhook-signature.js';
import { buildFastifyReceiver, type RunWebhook } from '../../examples/webhook-receivers/fastify-receiver.js';
import { buildExpressReceiver } from '../../examples/webhook-receivers/express-receiver.js';

const { vectors } = JSON.parse(readFileSync(new URL('../../examples/webhook-receivers/test-vectors.json', import.meta.url), 'utf8')) as {
  vectors: { name: string; secret: string; request_id: string; timestamp: number; body: string; signature_header: string }[];
};

/** An implementation that shares nothing with ours: the openssl command line. */
function opensslHmacHex(secret: string, content: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: content }).toString();
  return /([0-9a-f]{64})\s*$/.exec(out)![1];
}

const headersOf = (v: (typeof vectors)[number]) => ({
  'x-request-id': v.request_id,
  'x-service-webhook-timestamp': String(v.timestamp),
  'x-service-webhook-signature': v.signature_header,
});

describe('signatures', () => {
  it('match openssl dgst -sha256 -hmac over "<request_id>.<timestamp>.<body>" for every published vector', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(3);
    for (const v of vectors) {
      const content = Buffer.from(`${v.request_id}.${v.timestamp}.${v.body}`, 'utf8');
      expect(`v1,${opensslHmacHex(v.secret, content)}`, v.name).toBe(v.signature_header);
      expect(`v1,${webhookSignature(v.secret, v.request_id, v.timestamp, Buffer.from(v.body))}`).toBe(v.signature_header);
    }
  });

  it('match openssl for headers made at send time over random bytes', () => {
    const body = Buffer.from(JSON.stringify({ run_id: 'r', response: { pad: 'é'.repeat(5000) } }));
    const h = signatureHeaders('a secret', 'r-123', body, 1_767_225_600_000);
    expect(h['x-service-webhook-timestamp']).toBe('1767225600');
    const content = Buffer.concat([Buffer.from('r-123.1767225600.'), body]);
    expect(h['x-service-webhook-signature']).toBe(`v1,${opensslHmacHex('a secret', content)}`);
  });

  it('verifyWebhook accepts every vector and refuses tampering, wrong secrets, missing headers and stale timestamps', () => {
    for (const v of vectors) {
      const headers = headersOf(v);
      expect(verifyWebhook({ secret: v.secret, headers, body: v.body, nowSeconds: v.timestamp + 10 })).toEqual({ ok: true, requestId: v.request_id, timestamp: v.timestamp });
      expect(verifyWebhook({ secret: v.secret, headers, body: Buffer.from(v.body), nowSeconds: v.timestamp })).toMatchObject({ ok: true });
      expect(verifyWebhook({ secret: v.secret, headers, body: `${v.body} `, nowSeconds: v.timestamp })).toEqual({ ok: false, reason: 'signature does not match' });
      expect(verifyWebhook({ secret: `${v.secret}x`, headers, body: v.body, nowSeconds: v.timestamp }).ok).toBe(false);
      expect(verifyWebhook({ secret: v.secret, headers: { ...headers, 'x-request-id': 'other' }, body: v.body, nowSeconds: v.timestamp }).ok).toBe(false);
      expect(verifyWebhook({ secret: v.secret, headers, body: v.body, nowSeconds: v.timestamp + 301 })).toMatchObject({ ok: false, reason: expect.stringMatching(/300 s/) });
      expect(verifyWebhook({ secret: v.secret, headers, body: v.body, nowSeconds: v.timestamp - 301 }).ok).toBe(false);
      expect(verifyWebhook({ secret: v.secret, headers, body: v.body, nowSeconds: v.timestamp + 3000, toleranceSeconds: 3600 }).ok).toBe(true);
      const { 'x-service-webhook-signature': _drop, ...unsigned } = headers;
      expect(verifyWebhook({ secret: v.secret, headers: unsigned, body: v.body, nowSeconds: v.timestamp })).toMatchObject({ ok: false, reason: expect.stringMatching(/missing/) });
      // Header names are case-insensitive, and a Fetch Headers object works too.
      const upper = Object.fromEntries(Object.entries(headers).map(([k, val]) => [k.toUpperCase(), val]));
      expect(verifyWebhook({ secret: v.secret, headers: upper, body: v.body, nowSeconds: v.timestamp }).ok).toBe(true);
      expect(verifyWebhook({ secret: v.secret, headers: new Headers(headers), body: v.body, nowSeconds: v.timestamp }).ok).toBe(true);
    }
  });

  it('the Fastify and Express receiver examples accept a signed delivery once, and refuse a forged one', async () => {
    const secret = 'whsec_examples';
    const got: RunWebhook[] = [];
    const fastify = buildFastifyReceiver({ secret, onRun: (r) => void got.push(r) });
    await fastify.listen({ host: '127.0.0.1', port: 0 });
    const express = buildExpressReceiver({ secret, onRun: (r) => void got.push(r) });
    const server = await new Promise<import('node:http').Server>((resolve) => {
      const s = express.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const urls = [
        `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}/webhooks/runhook`,
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/runhook`,
      ];
      for (const url of urls) {
        const runId = `run-${url}`;
        const body = Buffer.from(JSON.stringify({ run_id: runId, status: 'succeeded', status_code: 200, response: { ok: 1 } }));
        const headers = { 'content-type': 'application/json', 'x-request-id': runId, ...signatureHeaders(secret, runId, body) };
        expect((await fetch(url, { method: 'POST', headers, body })).status, url).toBe(204);
        expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(200); // duplicate
        const forged = Buffer.from(body.toString().replace('succeeded', 'failure'));
        expect((await fetch(url, { method: 'POST', headers, body: forged })).status).toBe(401);
      }
      expect(got.map((r) => r.run_id)).toEqual(urls.map((u) => `run-${u}`));
    } finally {
      await fastify.close();
      await new Promise((r) => server.close(r));
    }
  });
});
