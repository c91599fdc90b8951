import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small HTTP function for demos and tests. The JSON body steers it:
 * {"sleep_ms": n} waits before answering, {"status": n} answers with that status,
 * {"content_type": "..."} and {"raw": "..."} answer with exactly those bytes.
 * Anything else is echoed back with the X-Request-Id it was called with.
 */
export interface EchoApp {
  url: string;
  port: number;
  /** Every call seen: request id, parsed body, and whether the caller hung up before the answer. */
  /** Every call, in order; `answeredAt` is Date.now() when the answer was handed to the socket. */
  calls: { requestId: string | undefined; body: unknown; disconnected: boolean; answeredAt?: number }[];
  close(): Promise<void>;
}

export async function startEchoApp(port = 0, host = '127.0.0.1'): Promise<EchoApp> {
  const calls: EchoApp['calls'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"not json"}');
        return;
      }
      const call: EchoApp['calls'][number] = { requestId: req.headers['x-request-id'] as string | undefined, body, disconnected: false };
      calls.push(call);
      res.on('close', () => {
        if (!res.writableFinished) call.disconnected = true;
      });
      const answer = () => {
        if (res.destroyed) return;
        call.answeredAt = Date.now();
        const status = typeof body.status === 'number' ? body.status : 200;
        if (typeof body.raw === 'string') {
          res.writeHead(status, { 'content-type': String(body.content_type ?? 'text/plain') }).end(body.raw);
          return;
        }
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ echo: body, request_id: call.requestId, path: req.url }));
      };
      const sleep = typeof body.sleep_ms === 'number' ? body.sleep_ms : 0;
      if (sleep > 0) setTimeout(answer, sleep);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${actual}/run`,
    port: actual,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
