import { Agent, errors } from 'undici';

// One keep-alive pool per app origin (Agent keys pools by origin). Timeouts are ours, not undici's:
// its 300 s header/body defaults would cut long runs short.
export function createAppDispatcher(connectionsPerOrigin = 256): Agent {
  return new Agent({
    connections: connectionsPerOrigin,
    headersTimeout: 0,
    bodyTimeout: 0,
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
}

export interface AppResponse {
  statusCode: number;
  contentType: string | null;
  body: Buffer;
}

export class AppUnreachableError extends Error {
  constructor(message: string, readonly cause?: unknown) {
    super(message);
    this.name = 'AppUnreachableError';
  }
}

/** Parsed once per app URL: `dispatch` takes origin and path separately. */
const targets = new Map<string, { origin: string; path: string }>();
function targetOf(url: string): { origin: string; path: string } {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    t = { origin: u.origin, path: u.pathname + u.search };
    if (targets.size > 10_000) targets.clear();
    targets.set(url, t);
  }
  return t;
}

const CONTENT_TYPE = 'content-type';

/**
 * POSTs a JSON run body to an app. Any HTTP answer is a result; only transport failures throw.
 *
 * Written on undici's dispatch handler rather than `request()`: `request()` wraps every answer in a
 * stream and an async body reader, which halved the throughput of /run (measured with
 * `npm run bench sync`); here the body is collected straight from the socket's chunks.
 */
export function callApp(opts: {
  url: string;
  runId: string;
  body: Buffer | string;
  dispatcher: Agent;
  signal?: AbortSignal;
}): Promise<AppResponse> {
  const { signal } = opts;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const { origin, path } = targetOf(opts.url);
  return new Promise<AppResponse>((resolve, reject) => {
    let abortDispatch: ((err?: Error) => void) | null = null;
    let aborted: Error | null = null;
    let settled = false;
    let statusCode = 0;
    let contentType: string | null = null;
    const chunks: Buffer[] = [];
    const settle = (err: unknown, res?: AppResponse) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(res!);
    };
    // Like request(): an abort before the request has a socket is applied as soon as it gets one.
    function onAbort() {
      aborted = signal!.reason instanceof Error ? signal!.reason : new Error(String(signal!.reason ?? 'aborted'));
      abortDispatch?.(aborted);
      settle(signal!.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    opts.dispatcher.dispatch(
      { origin, path, method: 'POST', body: opts.body, headers: { 'content-type': 'application/json', 'x-request-id': opts.runId } },
      {
        onConnect(abort) {
          abortDispatch = abort;
          if (aborted) abort(aborted);
        },
        onHeaders(status, rawHeaders) {
          // 1xx informational answers are followed by the real one.
          if (status < 200) return true;
          statusCode = status;
          for (let i = 0; i < rawHeaders.length; i += 2) {
            const name = rawHeaders[i];
            if (name.length === CONTENT_TYPE.length && name.toString('latin1').toLowerCase() === CONTENT_TYPE) {
              contentType = rawHeaders[i + 1].toString('latin1');
              break;
            }
          }
          return true;
        },
        onData(chunk) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          settle(null, { statusCode, contentType, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) });
        },
        onError(err) {
          if (signal?.aborted) return settle(signal.reason);
          settle(
            new AppUnreachableError(
              statusCode ? `app closed the connection mid-response: ${describeError(err)}` : `app unreachable: ${describeError(err)}`,
              err,
            ),
          );
        },
      },
    );
  });
}

function describeError(err: unknown): string {
  if (err instanceof errors.UndiciError) return `${err.code ?? err.name}: ${err.message}`;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return [e.code ?? e.cause?.code, e.message ?? e.cause?.message].filter(Boolean).join(': ') || String(err);
}
