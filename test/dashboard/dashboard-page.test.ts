import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoApp, type EchoApp } from '../../examples/echo/echo-app.js';
import { launchChromium } from '../helpers/browser.js';
import { authHeaders, startStack, waitFor, type Stack } from '../helpers/stack.js';
import { runsRepository } from '../../db/repositories/runs.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');
const ZONE = 'America/New_York';

let stack: Stack;
let echo: EchoApp;
let browser: Browser;
let token: string;
let asyncRunId: string;
let dir: string;

beforeAll(async () => {
  stack = await startStack({ worker: true });
  echo = await startEchoApp();
  await stack.deploy('dash', { name: 'echo', url: echo.url, cpu: 2, memoryGb: 4 });
  await stack.deploy('dash', { name: 'other', url: echo.url });
  token = await stack.token('dash');

  // Known events, through the real import CLI: this month, every class, and costs of each resource.
  dir = await mkdtemp(path.join(os.tmpdir(), 'runhook-dash-'));
  const ts = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  const lines = [
    ...[200, 200, 201, 204, 404, 429, 500, 503].map((status, i) => ({ type: 'request', app_id: 'dash-echo', ts: ts(5 + i), status })),
    { type: 'request', app_id: 'dash-echo', ts: ts(3), status: 101, websocket_close_code: 1000 },
    { type: 'request', app_id: 'dash-echo', ts: ts(3), status: 101, websocket_close_code: 1011 },
    { type: 'request', app_id: 'dash-echo', ts: ts(2) },
    { type: 'cost', app_id: 'dash-echo', ts: ts(4), running_time_ms: 90_000, cpu_cost_cents: 12.5, memory_cost_cents: 3.25, gpu_cost_cents: 40 },
  ];
  const file = path.join(dir, 'events.ndjson');
  await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'events', 'import', file], { cwd: ROOT, env: { ...process.env, DATABASE_URL: stack.db.url } });
  expect(stdout).toMatch(/loaded 12 events/);

  // Real runs for the runs table: two sync, one async.
  for (const body of [{ a: 1 }, { status: 500 }]) await fetch(`${stack.baseUrl}/v4/dash/echo/run`, { method: 'POST', headers: authHeaders(token), body: JSON.stringify(body) });
  const res = await fetch(`${stack.baseUrl}/v4/dash/echo/run?async=true`, { method: 'POST', headers: authHeaders(token), body: '{"b":2}' });
  asyncRunId = ((await res.json()) as { run_id: string }).run_id;
  await waitFor(async () => (await runsRepository(stack.pool).get(asyncRunId))?.finishedAt, 20_000);
  // Every recorded event is in PostgreSQL before the page and the test read the totals.
  await waitFor(async () => stack.api.events.recorder.stats().buffered === 0);
  browser = await launchChromium();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await echo?.close();
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function openDashboard(t: string): Promise<Page> {
  const context = await browser.newContext({ timezoneId: ZONE, viewport: { width: 1100, height: 1400 } });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}/dashboard/`);
  await page.fill('#token', t);
  await page.fill('#project', 'dash');
  await page.click('button[type=submit]');
  return page;
}

async function endpoint(params: Record<string, string>) {
  const res = await fetch(`${stack.baseUrl}/v2/projects/dash/apps/dash-echo/dashboard-metrics?${new URLSearchParams(params)}`, { headers: authHeaders(token) });
  return res.json();
}

const shownTotals = (page: Page, id: string) =>
  page.$$eval(`#${id} div`, (divs) => Object.fromEntries(divs.map((d) => [d.querySelector('dt')!.textContent, d.querySelector('dd')!.textContent])));

describe('dashboard page in Chromium', () => {
  it('shows the endpoint totals, renders both charts and the latest runs, and keeps the token out of the URL', async () => {
    const page = await openDashboard(token);
    await page.waitForSelector('body[data-loaded]', { timeout: 15_000 });
    const expected = await endpoint({ month: 'current', interval: 'day', tz: ZONE });
    const t = expected.request_totals;
    expect(t.total).toBeGreaterThanOrEqual(14);
    const requests = await shownTotals(page, 'request-totals');
    expect(requests).toEqual({
      Requests: t.total.toLocaleString('en-US'), '2xx': String(t['2xx']), '4xx': String(t['4xx']), '5xx': String(t['5xx']),
      'WebSocket ok': String(t.websocket_success), 'WebSocket error': String(t.websocket_error), Other: String(t.other),
    });
    const costs = await shownTotals(page, 'cost-totals');
    const usd = (cents: number) => (cents / 100 >= 1 ? `$${(cents / 100).toFixed(2)}` : `$${(cents / 100).toPrecision(3)}`);
    expect(costs.Total).toBe(usd(expected.cost_totals.total_cost_cents));
    expect(costs.GPU).toBe(usd(expected.cost_totals.gpu_cost_cents));
    expect(costs.CPU).toBe(usd(expected.cost_totals.cpu_cost_cents));
    expect(costs.Memory).toBe(usd(expected.cost_totals.memory_cost_cents));
    expect(expected.cost_totals.gpu_cost_cents).toBe(40);

    // Both charts drew something: canvases with painted pixels.
    for (const id of ['requests-chart', 'costs-chart']) {
      const painted = await page.$eval(`#${id} canvas`, (c) => {
        const canvas = c as HTMLCanvasElement;
        const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
        let n = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) n++;
        return { width: canvas.width, painted: n };
      });
      expect(painted.width).toBeGreaterThan(200);
      expect(painted.painted).toBeGreaterThan(1000);
    }

    const rows = await page.$$eval('#runs tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toHaveLength(3);
    expect(rows.map((r) => r[2]).sort()).toEqual(['async', 'sync', 'sync']);
    const link = await page.$eval('#runs tbody a', (a) => (a as HTMLAnchorElement).href);
    expect(link).toBe(`${stack.config.temporalUiUrl}/namespaces/default/workflows/${asyncRunId}`);

    expect(page.url()).not.toContain(token);
    expect(await page.evaluate(() => sessionStorage.getItem('runhook.token'))).toBe(token);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(token);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });
    await page.context().close();
  }, 60_000);

  it('refetches with tz when the zone changes, and shows the server message for an invalid range', async () => {
    const page = await openDashboard(token);
    await page.waitForSelector('body[data-loaded]', { timeout: 15_000 });
    const refetch = page.waitForRequest((r) => r.url().includes('/dashboard-metrics?') && new URL(r.url()).searchParams.get('tz') === 'Asia/Kolkata');
    await page.fill('#tz', 'Asia/Kolkata');
    await page.dispatchEvent('#tz', 'change');
    expect(new URL((await refetch).url()).searchParams.get('interval')).toBe('day');

    await page.selectOption('#period', 'custom');
    await page.selectOption('#interval', 'minute');
    await page.fill('#start', '2026-01-01T00:00');
    const answer = page.waitForResponse((r) => r.url().includes('/dashboard-metrics?') && new URL(r.url()).searchParams.has('end'));
    await page.fill('#end', '2026-03-01T00:00');
    await page.dispatchEvent('#end', 'change');
    const res = await answer;
    expect(res.status()).toBe(400);
    const { message } = await res.json();
    await page.waitForSelector('#error:not([hidden])');
    expect(await page.textContent('#error')).toBe(message);
    await page.context().close();
  }, 60_000);

  it('stays usable on a narrow screen: nothing wider than the phone', async () => {
    const context = await browser.newContext({ timezoneId: ZONE, viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/dashboard/`);
    const fcp = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null);
    console.log(`dashboard first contentful paint: ${fcp === null ? 'n/a' : `${Math.round(fcp)} ms`}`);
    await page.fill('#token', token);
    await page.fill('#project', 'dash');
    await page.click('button[type=submit]');
    await page.waitForSelector('body[data-loaded]', { timeout: 15_000 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    expect(await page.$eval('#requests-chart canvas', (c) => c.getBoundingClientRect().width)).toBeLessThanOrEqual(375);
    await context.close();
  }, 30_000);

  it('says clearly when the token is rejected', async () => {
    const page = await openDashboard('rh_' + 'x'.repeat(43));
    await page.waitForSelector('#error:not([hidden])', { timeout: 10_000 });
    expect(await page.textContent('#error')).toMatch(/^Token rejected: /);
    await page.context().close();
  }, 30_000);
});
