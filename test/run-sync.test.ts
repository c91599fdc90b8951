import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { authHeaders, startStack, type Stack } from './helpers/stack.js';

let stack: Stack;
let echo: EchoApp;
let token: string;

beforeAll(async () => {
  stack = await startStack({ env: { RUN_BODY_LIMIT_BYTES: String(64 * 1024) } });
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

const run = (app: string, body: string, extra: Record<string, string> = {}) =>
  fetch(`${stack.baseUrl}/v4/proj/${app}/run`, { method: 'POST', headers: authHeaders(token, extra), body });

describe('synchronous run', () => {
  it('passes the app status, content type and body through unchanged, with X-Run-Id', async () => {
    const res = await run('echo', JSON.stringify({ status: 201, raw: 'héllo <b>', content_type: 'text/html; charset=utf-8' }));
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toBe('héllo <b>');
    const runId = res.headers.get('x-run-id');
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(echo.calls.at(-1)?.requestId).toBe(runId);
  });

  it('passes app error statuses through as the result', async () => {
    const res = await run('echo', JSON.stringify({ status: 503 }));
    expect(res.status).toBe(503);
    expect((await res.json()).echo).toEqual({ status: 503 });
  });

  it('forwards the JSON body byte for byte', async () => {
    const body = '{ "b": 2,\n "a": [1, 2.50, "\\u00e9"] }';
    const res = await run('echo', body);
    expect(res.status).toBe(200);
    expect(echo.calls.at(-1)?.body).toEqual(JSON.parse(body));
  });

  it('answers 400 with a message for a body that is not JSON', async () => {
    const res = await run('echo', '{not json');
    expect(res.status).toBe(400);
    expect((await res.json()).message).toMatch(/not valid JSON/);
  });

  it('answers 413 for a body over the configured limit', async () => {
    const res = await run('echo', JSON.stringify({ pad: 'x'.repeat(70 * 1024) }));
    expect(res.status).toBe(413);
    expect(typeof (await res.json()).message).toBe('string');
  });

  it('answers 404 for an unknown app', async () => {
    const res = await run('nope', '{}');
    expect(res.status).toBe(404);
    expect((await res.json()).message).toMatch(/nope/);
  });

  it('answers 502 when the app is unreachable', async () => {
    const res = await run('gone', '{}');
    expect(res.status).toBe(502);
    expect((await res.json()).message).toMatch(/gone/);
  });

  it('answers 504 past the response_grace_period', async () => {
    const started = Date.now();
    const res = await run('slow', JSON.stringify({ sleep_ms: 3000 }));
    expect(res.status).toBe(504);
    expect((await res.json()).message).toMatch(/response_grace_period/);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('rejects an invalid async flag with 400', async () => {
    const res = await fetch(`${stack.baseUrl}/v4/proj/echo/run?async=maybe`, { method: 'POST', headers: authHeaders(token), body: '{}' });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toMatch(/async/);
  });
});
