import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LookupAddress } from 'node:dns';
import { request } from 'undici';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { checkWebhookEndpoint, createWebhookDispatcher, isNonPublicAddress, type Lookup } from '../../lib/webhook-destination.js';
import { authHeaders, startStack, type Stack } from '../helpers/stack.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/** A resolver that answers from a table: how a rebinding attacker's DNS would answer. */
function fakeDns(table: Record<string, string>): Lookup {
  return ((hostname: string, _opts: unknown, cb: (err: Error | null, addresses?: LookupAddress[]) => void) => {
    const address = table[hostname];
    if (!address) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    cb(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
  }) as unknown as Lookup;
}

describe('destination rules', () => {
  it('classifies loopback, private, link-local, metadata, CGNAT and mapped addresses as non-public', () => {
    for (const a of ['127.0.0.1', '127.9.9.9', '10.0.0.1', '172.16.5.5', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', '2002:a00:1::1', '[::1]']) {
      expect(isNonPublicAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '1.1.1.1', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isNonPublicAddress(a), a).toBe(false);
    }
  });

  it('checks URLs at request time, resolving names', async () => {
    const lookup = fakeDns({ 'hooks.example.com': '93.184.216.34', 'internal.example.com': '10.0.0.7', 'metadata.example.com': '169.254.169.254' });
    const check = (u: string) => checkWebhookEndpoint(u, { allowPrivate: false, lookup });
    await expect(check('https://hooks.example.com/in?x=1')).resolves.toBeInstanceOf(URL);
    await expect(check('http://93.184.216.34/')).resolves.toBeInstanceOf(URL);
    await expect(check('/relative')).rejects.toThrow(/absolute http or https URL/);
    await expect(check('ftp://hooks.example.com/')).rejects.toThrow(/http or https, not ftp/);
    await expect(check('https://user:pw@hooks.example.com/')).rejects.toThrow(/credentials/);
    await expect(check('https://internal.example.com/')).rejects.toThrow(/resolves to 10.0.0.7/);
    await expect(check('http://metadata.example.com/latest/meta-data')).rejects.toThrow(/169.254.169.254/);
    await expect(check('http://nowhere.example.com/')).rejects.toThrow(/does not resolve/);
    await expect(check('http://[::1]:8080/')).rejects.toThrow(/not a public address/);
    await expect(checkWebhookEndpoint('http://127.0.0.1/', { allowPrivate: true, lookup })).resolves.toBeInstanceOf(URL);
  });

  it('refuses a name re-pointed at loopback at connect time (DNS rebinding), unless allowed', async () => {
    const receiver = await startWebhookReceiver();
    const port = new URL(receiver.baseUrl).port;
    const endpoint = receiver.endpoint(() => ({ status: 200 }));
    const url = `http://rebound.example.com:${port}${new URL(endpoint).pathname}`;
    const lookup = fakeDns({ 'rebound.example.com': '127.0.0.1' });
    const guarded = createWebhookDispatcher({ allowPrivate: false, lookup });
    const open = createWebhookDispatcher({ allowPrivate: true, lookup });
    try {
      const err = await request(url, { method: 'POST', body: '{}', dispatcher: guarded }).then(() => null, (e) => e);
      expect(err).not.toBeNull();
      expect(err.code ?? err.cause?.code).toBe('EWEBHOOKDESTINATION');
      expect(receiver.to(endpoint)).toHaveLength(0);
      const res = await request(url, { method: 'POST', body: '{}', dispatcher: open });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      expect(receiver.to(endpoint)).toHaveLength(1);
    } finally {
      await guarded.close();
      await open.close();
      await receiver.close();
    }
  });
});

describe('run API validation with private destinations refused and no codec key', () => {
  let stack: Stack;
  let echo: EchoApp;
  let token: string;
  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'false', PAYLOAD_CODEC_KEY: '' } });
    echo = await startEchoApp();
    token = await stack.token('proj');
    await stack.deploy('proj', { name: 'echo', url: echo.url });
  });
  afterAll(async () => {
    await echo?.close();
    await stack?.close();
  });

  const post = (endpoint: string, opts: { async?: boolean; headers?: Record<string, string> } = {}) =>
    fetch(`${stack.baseUrl}/v4/proj/echo/run?${new URLSearchParams({ webhookEndpoint: endpoint, ...(opts.async ? { async: 'true' } : {}) })}`, {
      method: 'POST', headers: authHeaders(token, opts.headers), body: '{}',
    });

  it('answers 400 before running anything for a bad or non-public webhookEndpoint, sync and async', async () => {
    const cases: [string, RegExp][] = [
      ['not a url', /absolute http or https URL/],
      ['ftp://files.example.com/x', /http or https/],
      ['http://127.0.0.1:9/hook', /not a public address/],
      ['http://localhost:9/hook', /resolves to (127\.0\.0\.1|::1)/],
      ['http://169.254.169.254/latest/meta-data/', /not a public address/],
      ['http://[::1]/hook', /not a public address/],
      ['http://10.1.2.3/hook', /not a public address/],
      ['http://[::ffff:127.0.0.1]/hook', /not a public address/],
    ];
    for (const [endpoint, message] of cases) {
      for (const async of [false, true]) {
        const res = await post(endpoint, { async });
        expect(res.status, `${endpoint} async=${async}`).toBe(400);
        expect((await res.json()).message).toMatch(message);
      }
    }
    expect(echo.calls).toHaveLength(0);
    const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM runs');
    expect(rows[0].n).toBe(0);
  });

  it('refuses X-Webhook-Secret with a clear 503 when the server has no PAYLOAD_CODEC_KEY', async () => {
    for (const async of [false, true]) {
      const res = await post('http://93.184.216.34/hook', { async, headers: { 'x-webhook-secret': 'whsec_nokey' } });
      expect(res.status).toBe(503);
      expect((await res.json()).message).toMatch(/PAYLOAD_CODEC_KEY/);
    }
    // Off by default: no decrypting endpoint unless an operator turns it on.
    expect((await fetch(`${stack.baseUrl}/codec/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"payloads":[]}' })).status).toBe(404);
    const tooLong = await post('http://93.184.216.34/hook', { headers: { 'x-webhook-secret': 'x'.repeat(1025) } });
    expect(tooLong.status).toBe(400);
    expect(echo.calls).toHaveLength(0);
  });
});
