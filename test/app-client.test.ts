import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppUnreachableError, callApp, createAppDispatcher } from '../lib/app-client.js';

// callApp sits on undici's low-level dispatch API for speed; these pin the behaviour /run and the
// app-call activity rely on, which request() used to give for free.
let server: http.Server;
let base: string;
const seen: { path: string | undefined; requestId: string | undefined; contentType: string | undefined; body: string; closedEarly: boolean }[] = [];
const dispatcher = createAppDispatcher(4);

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const call = { path: req.url, requestId: req.headers['x-request-id'] as string | undefined, contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString(), closedEarly: false };
      seen.push(call);
      res.on('close', () => {
        if (!res.writableFinished) call.closedEarly = true;
      });
      if (req.url?.startsWith('/big')) {
        // Many chunks: the body is reassembled in order.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 64; i++) res.write(Buffer.alloc(16 * 1024, i));
        res.end();
      } else if (req.url?.startsWith('/informational')) {
        res.writeProcessing();
        setTimeout(() => res.writeHead(207, { 'Content-Type': 'application/problem+json' }).end('{"a":1}'), 20);
      } else if (req.url?.startsWith('/no-content')) {
        res.writeHead(204).end();
      } else if (req.url?.startsWith('/cut')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"partial":');
        setTimeout(() => res.destroy(), 20);
      } else if (req.url?.startsWith('/slow')) {
        setTimeout(() => res.writeHead(200).end('late'), 2_000);
      } else {
        res.writeHead(418, { 'content-type': 'text/plain; charset=utf-8' }).end('héllo');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('callApp', () => {
  it('POSTs the body with X-Request-Id and returns any status, content type and body unchanged', async () => {
    const res = await callApp({ url: `${base}/run?x=1`, runId: 'run-1', body: '{"in":1}', dispatcher });
    expect(res.statusCode).toBe(418);
    expect(res.contentType).toBe('text/plain; charset=utf-8');
    expect(res.body.toString('utf8')).toBe('héllo');
    expect(seen.at(-1)).toMatchObject({ path: '/run?x=1', requestId: 'run-1', contentType: 'application/json', body: '{"in":1}' });
  });

  it('reassembles a body that arrives in many chunks', async () => {
    const res = await callApp({ url: `${base}/big`, runId: 'run-2', body: Buffer.from('{}'), dispatcher });
    expect(res.body.length).toBe(64 * 16 * 1024);
    for (let i = 0; i < 64; i++) expect(res.body[i * 16 * 1024 + 5]).toBe(i);
  });

  it('skips 1xx informational answers and matches the content-type header case-insensitively', async () => {
    const res = await callApp({ url: `${base}/informational`, runId: 'run-3', body: '{}', dispatcher });
    expect(res.statusCode).toBe(207);
    expect(res.contentType).toBe('application/problem+json');
    expect(res.body.toString()).toBe('{"a":1}');
  });

  it('returns an empty body and no content type for 204', async () => {
    const res = await callApp({ url: `${base}/no-content`, runId: 'run-4', body: '{}', dispatcher });
    expect(res).toEqual({ statusCode: 204, contentType: null, body: Buffer.alloc(0) });
  });

  it('throws AppUnreachableError when nothing listens', async () => {
    const err = await callApp({ url: 'http://127.0.0.1:1/run', runId: 'run-5', body: '{}', dispatcher }).catch((e) => e);
    expect(err).toBeInstanceOf(AppUnreachableError);
    expect(err.message).toMatch(/^app unreachable: .*ECONNREFUSED/);
  });

  it('throws AppUnreachableError when the app hangs up mid-response', async () => {
    const err = await callApp({ url: `${base}/cut`, runId: 'run-6', body: '{}', dispatcher }).catch((e) => e);
    expect(err).toBeInstanceOf(AppUnreachableError);
    expect(err.message).toMatch(/^app closed the connection mid-response/);
  });

  it('rejects with the abort reason and hangs up on the app when the signal aborts', async () => {
    const abort = new AbortController();
    const reason = new Error('caller went away');
    const pending = callApp({ url: `${base}/slow`, runId: 'run-7', body: '{}', dispatcher, signal: abort.signal });
    await new Promise((r) => setTimeout(r, 100));
    abort.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect.poll(() => seen.find((c) => c.requestId === 'run-7')?.closedEarly, { timeout: 2_000 }).toBe(true);
  });

  it('rejects at once, without calling the app, when the signal is already aborted', async () => {
    const abort = new AbortController();
    abort.abort(new Error('too late'));
    await expect(callApp({ url: `${base}/run`, runId: 'run-8', body: '{}', dispatcher, signal: abort.signal })).rejects.toThrow('too late');
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.some((c) => c.requestId === 'run-8')).toBe(false);
  });

  it('applies an abort that comes while the request waits for a free connection', async () => {
    const one = createAppDispatcher(1);
    try {
      const first = callApp({ url: `${base}/slow`, runId: 'run-9a', body: '{}', dispatcher: one });
      const abort = new AbortController();
      const queued = callApp({ url: `${base}/run`, runId: 'run-9b', body: '{}', dispatcher: one, signal: abort.signal });
      abort.abort(new Error('gave up waiting'));
      await expect(queued).rejects.toThrow('gave up waiting');
      expect((await first).statusCode).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
      expect(seen.some((c) => c.requestId === 'run-9b')).toBe(false);
    } finally {
      await one.close();
    }
  });
});
