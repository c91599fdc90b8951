import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING } from '../../lib/payload-codec.js';
import { openWebhookSecret, sealWebhookSecret } from '../../lib/webhook-secret-box.js';
import { authHeaders, startStack, waitFor, type Stack } from '../helpers/stack.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const plainPayload = (json: unknown) => ({ metadata: { encoding: utf8('json/plain') }, data: utf8(JSON.stringify(json)) });

describe('payload codec', () => {
  it('round-trips payloads, passes through plaintext ones (old histories) and names a wrong key', async () => {
    const codec = new AesGcmPayloadCodec(randomBytes(32));
    const original = [plainPayload({ endpoint: 'https://hooks.example.com/x?token=abc' }), plainPayload(null)];
    const encoded = await codec.encode(original);
    expect(Buffer.from(encoded[0].metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    expect(Buffer.from(encoded[0].data!).includes('token=abc')).toBe(false);
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => Buffer.from(p.data!).toString())).toEqual(original.map((p) => Buffer.from(p.data).toString()));
    expect(await codec.decode(original)).toEqual(original);
    await expect(new AesGcmPayloadCodec(randomBytes(32)).decode(encoded)).rejects.toThrow(/PAYLOAD_CODEC_KEY differs/);
    const tampered = { ...encoded[0], data: Buffer.from(encoded[0].data!).fill(1, 20, 21) };
    await expect(codec.decode([tampered])).rejects.toThrow();
  });

  it('seals webhook secrets bound to their run', () => {
    const key = randomBytes(32).toString('base64');
    const sealed = sealWebhookSecret(key, 'run-1', 'whsec_abc');
    expect(sealed.includes(Buffer.from('whsec_abc'))).toBe(false);
    expect(openWebhookSecret(key, 'run-1', sealed)).toBe('whsec_abc');
    expect(() => openWebhookSecret(key, 'run-2', sealed)).toThrow(/sealed for another run/);
    expect(() => openWebhookSecret(randomBytes(32).toString('base64'), 'run-1', sealed)).toThrow(/sealed with key/);
    expect(() => openWebhookSecret('', 'run-1', sealed)).toThrow(/PAYLOAD_CODEC_KEY is not set/);
    expect(() => sealWebhookSecret('', 'run-1', 'x')).toThrow(/PAYLOAD_CODEC_KEY/);
  });
});

describe('codec endpoint for the Web UI', () => {
  let stack: Stack;
  let token: string;
  beforeAll(async () => {
    // No worker: the run's start event is enough to hold an encrypted input.
    stack = await startStack({ env: { PAYLOAD_CODEC_ENDPOINT: 'true', TEMPORAL_UI_URL: 'http://127.0.0.1:8233' } });
    token = await stack.token('proj');
    await stack.deploy('proj', { name: 'echo', url: 'http://127.0.0.1:9/run' });
  });
  afterAll(async () => stack?.close());

  it('decodes a payload straight from history (remote codec protocol) and answers CORS preflights of the UI origin only', async () => {
    const endpoint = 'http://127.0.0.1:9/hook?token=in-the-url';
    const res = await fetch(`${stack.baseUrl}/v4/proj/echo/run?async=true&webhookEndpoint=${encodeURIComponent(endpoint)}`, {
      method: 'POST', headers: authHeaders(token, { 'x-webhook-secret': 'whsec_codec' }), body: '{}',
    });
    const { run_id: runId } = await res.json();
    const handle = stack.temporal.workflow.getHandle(runId);
    try {
      // The 202 comes once the run is accepted; its workflow starts a moment later (start outbox).
      const raw = await waitFor(() =>
        stack.temporal.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId: runId } }).catch(() => null),
      10_000, 50);
      const input = raw.history!.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
      const asJson = {
        metadata: Object.fromEntries(Object.entries(input.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
        data: Buffer.from(input.data!).toString('base64'),
      };
      expect(Buffer.from(asJson.metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
      expect(Buffer.from(input.data!).includes('in-the-url')).toBe(false);

      const decoded = await fetch(`${stack.baseUrl}/codec/decode`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default', origin: 'http://127.0.0.1:8233' },
        body: JSON.stringify({ payloads: [asJson] }),
      });
      expect(decoded.status).toBe(200);
      expect(decoded.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
      const { payloads } = await decoded.json();
      expect(Buffer.from(payloads[0].metadata.encoding, 'base64').toString()).toBe('json/plain');
      const value = JSON.parse(Buffer.from(payloads[0].data, 'base64').toString());
      expect(value).toMatchObject({ runId, webhook: { endpoint, signed: true } });
      // The secret itself is not in the input at all, only the fact that deliveries are signed.
      expect(JSON.stringify(value)).not.toContain('whsec_codec');

      const encoded = await (await fetch(`${stack.baseUrl}/codec/encode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payloads }) })).json();
      expect(Buffer.from(encoded.payloads[0].metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);

      const preflight = await fetch(`${stack.baseUrl}/codec/decode`, {
        method: 'OPTIONS', headers: { origin: 'http://localhost:8233', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/x-namespace/);
      const foreign = await fetch(`${stack.baseUrl}/codec/decode`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(foreign.headers.get('access-control-allow-origin')).toBeNull();

      const bad = await fetch(`${stack.baseUrl}/codec/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"nope":1}' });
      expect(bad.status).toBe(400);
    } finally {
      await handle.terminate('test done').catch(() => {});
    }
  });
});
