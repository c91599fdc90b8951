import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { startStack, waitFor, type Stack } from './helpers/stack.js';

let stack: Stack;
let server: http.Server;
let wss: WebSocketServer;
let token: string;
const seen: { path: string; requestId: string | undefined }[] = [];

beforeAll(async () => {
  stack = await startStack();
  // A real WebSocket app: echoes text and binary, closes with a code on request.
  server = http.createServer();
  wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => {
    seen.push({ path: req.url ?? '', requestId: req.headers['x-request-id'] as string | undefined });
    ws.on('message', (data, binary) => {
      const text = data.toString();
      if (!binary && text.startsWith('close:')) ws.close(Number(text.slice(6)), 'asked to');
      else ws.send(data, { binary });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  token = await stack.token('proj');
  await stack.deploy('proj', { name: 'ws', url: `http://127.0.0.1:${port}/run` });
  await stack.deploy('proj', { name: 'gone', url: 'http://127.0.0.1:1/run' });
});
afterAll(async () => {
  wss?.close();
  server?.closeAllConnections();
  server?.close();
  await stack?.close();
});

const wsUrl = (path: string) => `${stack.baseUrl.replace('http', 'ws')}${path}`;

function open(path: string, headers: Record<string, string> = { authorization: `Bearer ${token}` }) {
  const ws = new WebSocket(wsUrl(path), { headers });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const rejected = new Promise<number>((resolve) => ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
  return { ws, closed, rejected };
}

async function wsEvents() {
  const { rows } = await stack.pool.query('SELECT ws_close_code, status FROM request_events WHERE app_id = $1 ORDER BY ts', ['proj-ws']);
  return rows;
}

it('proxies text and binary both ways to the app path, and records the close code', async () => {
  const { ws, closed } = open('/v4/proj/ws/stream/v1?x=1');
  await new Promise((r) => ws.once('open', r));
  const got: { data: string; binary: boolean }[] = [];
  ws.on('message', (data, binary) => got.push({ data: data.toString(), binary }));
  ws.send('hello');
  ws.send(Buffer.from([1, 2, 3]), { binary: true });
  await waitFor(async () => got.length === 2);
  expect(got).toEqual([{ data: 'hello', binary: false }, { data: '\u0001\u0002\u0003', binary: true }]);
  expect(seen.at(-1)!.path).toBe('/stream/v1?x=1');
  expect(seen.at(-1)!.requestId).toMatch(/^[0-9a-f-]{36}$/);
  ws.close(1000, 'bye');
  expect((await closed).code).toBe(1000);
  await waitFor(async () => (await wsEvents()).length === 1, 5_000);
  await stack.api.events.recorder.flush?.();
  expect(await wsEvents()).toEqual([{ ws_close_code: 1000, status: null }]);
});

it('passes the app closing with an error code back to the client', async () => {
  const { ws, closed } = open('/v4/proj/ws/chat');
  await new Promise((r) => ws.once('open', r));
  ws.send('close:4001');
  expect(await closed).toEqual({ code: 4001, reason: 'asked to' });
  await waitFor(async () => (await wsEvents()).some((e) => e.ws_close_code === 4001), 5_000);
});

it('classifies websocket closes on the dashboard', async () => {
  const { ws, closed } = open('/v4/proj/ws/chat');
  await new Promise((r) => ws.once('open', r));
  ws.send('close:1002');
  expect((await closed).code).toBe(1002);
  const start = new Date(Date.now() - 3600_000);
  start.setUTCMinutes(0, 0, 0);
  const end = new Date(start.getTime() + 3 * 3600_000);
  const q = new URLSearchParams({ start: start.toISOString().replace('.000', ''), end: end.toISOString().replace('.000', ''), interval: 'hour' });
  const m = await waitFor(async () => {
    const r = await (await fetch(`${stack.baseUrl}/v2/projects/proj/apps/proj-ws/dashboard-metrics?${q}`, { headers: { authorization: `Bearer ${token}` } })).json();
    return r.request_totals.total === 3 ? r : null;
  }, 10_000, 200);
  expect(m.request_totals).toMatchObject({ websocket_success: 1, websocket_error: 1, other: 1 });
});

it('requires the same auth as /run', async () => {
  const anonymous = open('/v4/proj/ws/chat', {});
  expect(await anonymous.rejected).toBe(401);
  anonymous.ws.on('error', () => {});
  anonymous.ws.terminate();
  const other = await stack.token('other');
  const foreign = open('/v4/proj/ws/chat', { authorization: `Bearer ${other}` });
  expect(await foreign.rejected).toBe(403);
  foreign.ws.on('error', () => {});
  foreign.ws.terminate();
});

it('closes with 1011 when the app is unreachable, recorded without status', async () => {
  const { closed } = open('/v4/proj/gone/chat');
  expect((await closed).code).toBe(1011);
  await waitFor(async () => {
    const { rows } = await stack.pool.query("SELECT status, ws_close_code FROM request_events WHERE app_id = 'proj-gone'");
    return rows.length === 1 && rows[0].status === null && rows[0].ws_close_code === null;
  }, 5_000);
});

it('answers a plain GET on an app path with 404 {message}', async () => {
  const res = await fetch(`${stack.baseUrl}/v4/proj/ws/chat`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(404);
  expect((await res.json()).message).toMatch(/WebSocket/);
});
