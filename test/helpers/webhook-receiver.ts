import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the receiver does with the n-th request (1-based) to a path. */
export type ReceiverAction =
  | { status: number; headers?: Record<string, string>; delayMs?: number }
  | { destroy: true }
  | { hang: true };

export interface ReceivedRequest {
  path: string;
  /** Date.now() when the request head arrived. */
  at: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface WebhookReceiver {
  baseUrl: string;
  requests: ReceivedRequest[];
  /** A fresh path on the receiver that answers the n-th request with `script(n)`. */
  endpoint(script: (n: number) => ReceiverAction): string;
  to(url: string): ReceivedRequest[];
  close(): Promise<void>;
}

let seq = 0;

/** A real HTTP webhook receiver on loopback, scripted per path, recording every request byte for byte. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const scripts = new Map<string, (n: number) => ReceiverAction>();
  const counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const at = Date.now();
    const path = (req.url ?? '/').split('?')[0];
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests.push({ path, at, headers: req.headers, body: Buffer.concat(chunks) });
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const action = scripts.get(path)?.(n) ?? { status: 200 };
      if ('destroy' in action) return void req.socket.destroy();
      if ('hang' in action) return;
      const answer = () => res.writeHead(action.status, { 'content-type': 'text/plain', ...action.headers }).end('ok');
      if (action.delayMs) setTimeout(answer, action.delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    requests,
    endpoint(script) {
      const path = `/hook-${++seq}`;
      scripts.set(path, script);
      return `${baseUrl}${path}`;
    },
    to(url) {
      const path = new URL(url).pathname;
      return requests.filter((r) => r.path === path);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
