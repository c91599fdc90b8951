import { DateTime } from 'luxon';
import type { CostEvent, RequestEvent } from '../../../db/metrics/event-types.js';

// An independent model of the endpoint's bucketing, written with luxon (ICU's time zone data) and
// plain loops instead of SQL. The definition it encodes: a bucket is the set of instants sharing a
// label (the local date or month in the zone; for minutes and hours the local wall-clock minute or hour
// together with the UTC offset); a bucket's key is its first instant; the buckets reported are those
// overlapping [start, end). Counting is done per event, from the raw events, never from rollups.

export type Unit = 'minute' | 'hour' | 'day' | 'month';

const MIN = 60_000;
const REACH_MS: Record<Unit, number> = { minute: 2 * MIN, hour: 120 * MIN, day: 48 * 60 * MIN, month: 768 * 60 * MIN };

export function labelOf(ms: number, unit: Unit, zone: string): string {
  const dt = DateTime.fromMillis(ms, { zone });
  switch (unit) {
    case 'month':
      return dt.toFormat('yyyy-MM');
    case 'day':
      return dt.toFormat('yyyy-MM-dd');
    case 'hour':
      return `${dt.toFormat("yyyy-MM-dd'T'HH")}@${dt.offset}`;
    case 'minute':
      return `${dt.toFormat("yyyy-MM-dd'T'HH:mm")}@${dt.offset}`;
  }
}

export interface OracleBucket {
  start: number;
  label: string;
  requests: { total: number; '2xx': number; '4xx': number; '5xx': number; websocket_success: number; websocket_error: number; other: number };
  costs: { running: number; gpu: bigint; cpu: bigint; mem: bigint };
}

/** Minute steps for minute/hour periods; 15-minute steps for day/month (checked separately: every offset is a multiple of 15 min). */
export function oracleBuckets(q: { start: Date; end: Date; interval: Unit; tz: string }, requests: readonly RequestEvent[], costs: readonly CostEvent[]): OracleBucket[] {
  const step = q.interval === 'minute' || q.interval === 'hour' ? MIN : 15 * MIN;
  const s = q.start.getTime();
  const e = q.end.getTime();
  const lo = Math.floor(s / step) * step;
  const first = new Map<string, number>();
  const reported = new Set<string>();
  for (let t = lo - REACH_MS[q.interval]; t <= e + REACH_MS[q.interval]; t += step) {
    const label = labelOf(t, q.interval, q.tz);
    if (!first.has(label)) first.set(label, t);
    if (t >= lo && t < e) reported.add(label);
  }
  const byLabel = new Map<string, OracleBucket>();
  for (const label of reported) {
    byLabel.set(label, {
      start: first.get(label)!,
      label,
      requests: { total: 0, '2xx': 0, '4xx': 0, '5xx': 0, websocket_success: 0, websocket_error: 0, other: 0 },
      costs: { running: 0, gpu: 0n, cpu: 0n, mem: 0n },
    });
  }
  // Only events near the period can fall in a reported bucket; labelling the rest is wasted work.
  const near = (ms: number) => ms >= lo - REACH_MS[q.interval] && ms <= e + REACH_MS[q.interval];
  for (const ev of requests) {
    if (!near(ev.ts.getTime())) continue;
    const b = byLabel.get(labelOf(ev.ts.getTime(), q.interval, q.tz));
    if (!b) continue;
    b.requests.total++;
    const ws = ev.wsCloseCode ?? null;
    if (ws !== null && ws >= 1000 && ws <= 1001) b.requests.websocket_success++;
    else if (ws !== null && ws >= 1002 && ws <= 1999) b.requests.websocket_error++;
    else {
      const code = ws ?? ev.status;
      if (code !== null && code >= 200 && code <= 299) b.requests['2xx']++;
      else if (code !== null && code >= 400 && code <= 499) b.requests['4xx']++;
      else if (code !== null && code >= 500 && code <= 599) b.requests['5xx']++;
      else b.requests.other++;
    }
  }
  for (const ev of costs) {
    if (!near(ev.ts.getTime())) continue;
    const b = byLabel.get(labelOf(ev.ts.getTime(), q.interval, q.tz));
    if (!b) continue;
    b.costs.running += ev.runningTimeMs;
    b.costs.gpu += ev.gpuUcents;
    b.costs.cpu += ev.cpuUcents;
    b.costs.mem += ev.memoryUcents;
  }
  return [...byLabel.values()].sort((a, b) => a.start - b.start);
}

/** The response body the endpoint should give, built from oracle buckets with luxon formatting. */
export function expectedBody(q: { interval: Unit; tz: string }, buckets: readonly OracleBucket[]) {
  const subDay = q.interval === 'minute' || q.interval === 'hour';
  const requests: Record<string, unknown> = {};
  const costs: Record<string, unknown> = {};
  for (const b of buckets) {
    const local = DateTime.fromMillis(b.start, { zone: q.tz });
    const rkey = subDay ? DateTime.fromMillis(b.start, { zone: 'UTC' }).toISO({ suppressMilliseconds: true })! : local.toISO({ suppressMilliseconds: true })!;
    const ckey = subDay ? rkey : local.toFormat('yyyy-MM-dd');
    requests[rkey] = { ...b.requests };
    costs[ckey] = {
      gpu_cost_cents: Number(b.costs.gpu) / 1e6,
      cpu_cost_cents: Number(b.costs.cpu) / 1e6,
      memory_cost_cents: Number(b.costs.mem) / 1e6,
      total_cost_cents: Number(b.costs.gpu + b.costs.cpu + b.costs.mem) / 1e6,
      total_running_time_ms: b.costs.running,
      unique_container_count: 0,
    };
  }
  return { requests, costs };
}

/** True when every UTC offset of `zone` between the two instants (hourly samples) is a multiple of 15 minutes. */
export function offsetsOnQuarterHours(zone: string, from: number, to: number): boolean {
  for (let t = from; t <= to; t += 60 * MIN) if (DateTime.fromMillis(t, { zone }).offset % 15 !== 0) return false;
  return true;
}

/** The first local day on or after `from` whose length in hours satisfies `pred` (e.g. 23 or 25). */
export function findDay(zone: string, from: Date, pred: (hours: number) => boolean, days = 400): DateTime {
  let d = DateTime.fromJSDate(from, { zone }).startOf('day');
  for (let i = 0; i < days; i++) {
    const next = d.plus({ days: 1 }).startOf('day');
    if (pred(next.diff(d, 'hours').hours)) return d;
    d = next;
  }
  throw new Error(`no such day in ${zone} within ${days} days of ${from.toISOString()}`);
}

/** The first instant on or after `from` where the zone's offset changes (15-minute resolution). */
export function findTransition(zone: string, from: Date, days = 400): { at: number; before: number; after: number } {
  const step = 15 * MIN;
  let t = Math.ceil(from.getTime() / step) * step;
  let prev = DateTime.fromMillis(t, { zone }).offset;
  for (let i = 0; i < (days * 24 * 60) / 15; i++) {
    t += step;
    const off = DateTime.fromMillis(t, { zone }).offset;
    if (off !== prev) return { at: t, before: prev, after: off };
    prev = off;
  }
  throw new Error(`no offset change in ${zone} within ${days} days`);
}
