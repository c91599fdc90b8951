import type { CostEvent, RequestEvent } from '../../../db/metrics/event-types.js';

/** Deterministic pseudo-random numbers (mulberry32), so a failing dataset can be reproduced. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A mix covering every category: 2xx, 4xx, 5xx, 1xx/3xx (other), no status (other), WebSocket closes
// with success, error and out-of-range codes.
const OUTCOMES: Array<{ status: number | null; ws?: number }> = [
  { status: 200 }, { status: 201 }, { status: 204 }, { status: 299 }, { status: 404 }, { status: 400 }, { status: 499 },
  { status: 500 }, { status: 503 }, { status: 599 }, { status: 302 }, { status: 101 }, { status: null },
  { status: 101, ws: 1000 }, { status: 101, ws: 1001 }, { status: 101, ws: 1002 }, { status: 101, ws: 1006 },
  { status: 101, ws: 1999 }, { status: 101, ws: 4000 }, { status: null, ws: 1011 },
];

export function requestAt(ts: number, appId: string, rnd: () => number): RequestEvent {
  const o = OUTCOMES[Math.floor(rnd() * OUTCOMES.length)];
  return { ts: new Date(ts), appId, status: o.status, wsCloseCode: o.ws ?? null, async: rnd() < 0.2 };
}

export function costAt(ts: number, appId: string, rnd: () => number): CostEvent {
  return {
    ts: new Date(ts),
    appId,
    runningTimeMs: Math.floor(rnd() * 5000),
    gpuUcents: rnd() < 0.5 ? 0n : BigInt(Math.floor(rnd() * 2_000_000)),
    cpuUcents: BigInt(Math.floor(rnd() * 50_000)),
    memoryUcents: BigInt(Math.floor(rnd() * 9_999)),
  };
}

/** `n` requests and `n/2` costs spread uniformly over [from, to), plus dense events around `hotspots`. */
export function makeEvents(opts: { appId: string; from: number; to: number; n: number; hotspots?: number[]; seed?: number }) {
  const rnd = prng(opts.seed ?? 42);
  const requests: RequestEvent[] = [];
  const costs: CostEvent[] = [];
  for (let i = 0; i < opts.n; i++) {
    const ts = opts.from + Math.floor(rnd() * (opts.to - opts.from));
    requests.push(requestAt(ts, opts.appId, rnd));
    if (i % 2 === 0) costs.push(costAt(ts, opts.appId, rnd));
  }
  for (const h of opts.hotspots ?? []) {
    // Every 7 minutes for 3 hours either side, and on and just before every 15-minute edge.
    for (let t = h - 3 * 3_600_000; t <= h + 3 * 3_600_000; t += 7 * 60_000) requests.push(requestAt(t, opts.appId, rnd));
    for (let t = h - 3 * 3_600_000; t <= h + 3 * 3_600_000; t += 15 * 60_000) {
      requests.push(requestAt(t, opts.appId, rnd), requestAt(t - 1, opts.appId, rnd));
      costs.push(costAt(t, opts.appId, rnd), costAt(t - 1, opts.appId, rnd));
    }
  }
  return { requests, costs };
}
