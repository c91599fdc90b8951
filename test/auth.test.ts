import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../examples/echo/echo-app.js';
import { serviceAccountsRepository } from '../db/repositories/service-accounts.js';
import { generateToken } from '../lib/tokens.js';
import { startStack, type Stack } from './helpers/stack.js';

let stack: Stack;
let echo: EchoApp;

beforeAll(async () => {
  stack = await startStack();
  echo = await startEchoApp();
  await stack.deploy('alpha', { name: 'echo', url: echo.url });
  await stack.deploy('beta', { name: 'echo', url: echo.url });
});
afterAll(async () => {
  await echo?.close();
  await stack?.close();
});

const call = (path: string, authorization?: string, method = 'POST') =>
  fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(authorization !== undefined ? { authorization } : {}) },
    body: method === 'POST' ? '{}' : undefined,
  });

describe('bearer token auth on /v4 and /v2', () => {
  it('accepts a valid token of the project', async () => {
    const token = await stack.token('alpha');
    const res = await call('/v4/alpha/echo/run', `Bearer ${token}`);
    expect(res.status).toBe(200);
  });

  const cases: [string, () => Promise<string | undefined>, RegExp][] = [
    ['missing header', async () => undefined, /missing/],
    ['not a bearer scheme', async () => `Basic ${Buffer.from('a:b').toString('base64')}`, /malformed/],
    ['bearer without token', async () => 'Bearer ', /malformed/],
    ['malformed token', async () => 'Bearer not-a-token', /malformed/],
    ['unknown token', async () => `Bearer ${generateToken()}`, /invalid/],
    ['expired token', async () => {
      const { account, token } = await serviceAccountsRepository(stack.pool).create('alpha', 'old', new Date(Date.now() + 300));
      await new Promise((r) => setTimeout(r, 400));
      expect(account.expiresAt).not.toBeNull();
      return `Bearer ${token}`;
    }, /expired/],
    ['revoked token', async () => {
      const repo = serviceAccountsRepository(stack.pool);
      const { account, token } = await repo.create('alpha', 'gone', null);
      await repo.revoke(account.id);
      return `Bearer ${token}`;
    }, /revoked/],
  ];
  for (const [name, header, message] of cases) {
    it(`answers 401 {message} for a ${name}`, async () => {
      for (const path of ['/v4/alpha/echo/run', '/v4/alpha/nope/run']) {
        const res = await call(path, await header());
        expect(res.status).toBe(401);
        const body = await res.json();
        expect(Object.keys(body)).toEqual(['message']);
        expect(body.message).toMatch(message);
      }
    });
  }

  it('answers 401 on the management API too', async () => {
    const res = await call('/v2/projects/alpha/apps/alpha-echo/dashboard-metrics', undefined, 'GET');
    expect(res.status).toBe(401);
    expect((await res.json()).message).toMatch(/missing/);
  });

  it('answers 403 for a valid token of another project, and never calls the app', async () => {
    const token = await stack.token('alpha');
    const before = echo.calls.length;
    const res = await call('/v4/beta/echo/run', `Bearer ${token}`);
    expect(res.status).toBe(403);
    expect((await res.json()).message).toMatch(/beta/);
    const asyncRes = await call('/v4/beta/echo/run?async=true', `Bearer ${token}`);
    expect(asyncRes.status).toBe(403);
    expect(echo.calls.length).toBe(before);
  });

  it('stops accepting a token soon after it is revoked', async () => {
    const repo = serviceAccountsRepository(stack.pool);
    const { account, token } = await repo.create('alpha', 'rotating', null);
    expect((await call('/v4/alpha/echo/run', `Bearer ${token}`)).status).toBe(200);
    await repo.revoke(account.id);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await call('/v4/alpha/echo/run', `Bearer ${token}`)).status).toBe(401);
  });

  it('leaves /healthz open', async () => {
    const res = await fetch(`${stack.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', postgres: 'ok', temporal: 'ok' });
  });
});
