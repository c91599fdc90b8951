import { Agent, errors, request } from 'undici';

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

/** POSTs a JSON run body to an app. Any HTTP answer is a result; only transport failures throw. */
export async function callApp(opts: {
  url: string;
  runId: string;
  body: Buffer | string;
  dispatcher: Agent;
  signal?: AbortSignal;
}): Promise<AppResponse> {
  let res;
  try {
    res = await request(opts.url, {
      method: 'POST',
      body: opts.body,
      headers: { 'content-type': 'application/json', 'x-request-id': opts.runId },
      dispatcher: opts.dispatcher,
      signal: opts.signal,
    });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw new AppUnreachableError(`app unreachable: ${describeError(err)}`, err);
  }
  try {
    const body = Buffer.from(await res.body.arrayBuffer());
    const ct = res.headers['content-type'];
    return { statusCode: res.statusCode, contentType: Array.isArray(ct) ? ct[0] : ct ?? null, body };
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw new AppUnreachableError(`app closed the connection mid-response: ${describeError(err)}`, err);
  }
}

function describeError(err: unknown): string {
  if (err instanceof errors.UndiciError) return `${err.code ?? err.name}: ${err.message}`;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  return [e.code ?? e.cause?.code, e.message ?? e.cause?.message].filter(Boolean).join(': ') || String(err);
}
