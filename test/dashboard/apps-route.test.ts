import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import dashboardPage from '../../api/routes/dashboard-page.js';
import { authHeaders, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
  await stack.deploy('alpha', { name: 'echo', url: 'http://127.0.0.1:9/run' });
  await stack.deploy('alpha', { name: 'gpu-job', url: 'http://127.0.0.1:9/run', compute: 'AMPERE_A10', gpuCount: 1 });
  await stack.deploy('beta', { name: 'secret', url: 'http://127.0.0.1:9/run' });
});
afterAll(async () => {
  await stack?.close();
});

it("lists a project's apps, and only to that project's tokens", async () => {
  const url = `${stack.baseUrl}/v2/projects/alpha/apps`;
  const res = await fetch(url, { headers: authHeaders(await stack.token('alpha')) });
  expect(res.status).toBe(200);
  const { apps } = (await res.json()) as { apps: { app_id: string; name: string; hardware: { compute: string; gpu_count: number } }[] };
  expect(apps.map((a) => a.app_id)).toEqual(['alpha-echo', 'alpha-gpu-job']);
  expect(apps[1].hardware).toMatchObject({ compute: 'AMPERE_A10', gpu_count: 1 });

  const none = await fetch(url);
  expect(none.status).toBe(401);
  expect((await none.json()).message).toMatch(/Authorization/);
  const other = await fetch(url, { headers: authHeaders(await stack.token('beta')) });
  expect(other.status).toBe(403);
  expect((await other.json()).message).toMatch(/project alpha/);
  const empty = await fetch(`${stack.baseUrl}/v2/projects/gamma/apps`, { headers: authHeaders(await stack.token('gamma')) });
  expect(await empty.json()).toEqual({ apps: [] });
});

it('serves the built dashboard page and its config, without data or secrets', async () => {
  const page = await fetch(`${stack.baseUrl}/dashboard/`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  const html = await page.text();
  expect(html).toContain('runhook');
  // Offline: every script and stylesheet comes from this server.
  for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(m[1]).toMatch(/^\/dashboard\//);
  expect((await fetch(`${stack.baseUrl}/dashboard`, { redirect: 'manual' })).headers.get('location')).toBe('/dashboard/');
  const config = await (await fetch(`${stack.baseUrl}/dashboard/config.json`)).json();
  expect(config).toEqual({ temporal_ui_url: stack.config.temporalUiUrl, temporal_namespace: 'default' });
});

it('answers 404 with how to build it when the page is not built', async () => {
  const empty = await mkdtemp(path.join(os.tmpdir(), 'runhook-no-dist-'));
  const api = Fastify();
  try {
    await api.register(dashboardPage, { distDir: empty, temporalUiUrl: 'http://127.0.0.1:8233', temporalNamespace: 'default' });
    const base = await api.listen({ host: '127.0.0.1', port: 0 });
    for (const url of ['/dashboard', '/dashboard/', '/dashboard/index.html']) {
      const res = await fetch(base + url);
      expect(res.status, url).toBe(404);
      expect(await res.json()).toEqual({ message: 'dashboard not built: run npm run build' });
    }
  } finally {
    await api.close();
    await rm(empty, { recursive: true, force: true });
  }
});
