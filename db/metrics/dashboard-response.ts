import { DateTime } from 'luxon';
import type { BucketRow } from './dashboard-query.js';
import type { Period } from './period.js';

export interface RequestsEntry {
  total: number;
  '2xx': number;
  '4xx': number;
  '5xx': number;
  websocket_success: number;
  websocket_error: number;
  other: number;
}

export interface CostsEntry {
  gpu_cost_cents: number;
  cpu_cost_cents: number;
  memory_cost_cents: number;
  total_cost_cents: number;
  total_running_time_ms: number;
  unique_container_count: number;
}

export interface DashboardMetrics {
  requests: Record<string, RequestsEntry>;
  request_totals: RequestsEntry;
  costs: Record<string, CostsEntry>;
  cost_totals: CostsEntry;
  start_date: string;
  end_date: string;
  interval: string;
}

/**
 * Micro-cents to the response's fractional cents. Division of two exact doubles is correctly rounded,
 * so this is the double nearest the exact decimal (exact below 2^53 micro-cents, about $90 billion).
 */
export function ucentsToCents(ucents: bigint): number {
  return Number(ucents) / 1e6;
}

type Sums = Omit<BucketRow, 'bucket'>;
const FIELDS = ['n_total', 'n_2xx', 'n_4xx', 'n_5xx', 'n_ws_ok', 'n_ws_err', 'n_other', 'running_time_ms', 'gpu_ucents', 'cpu_ucents', 'mem_ucents'] as const;

/** Totals are summed from the very rows returned, on the integers, so they equal the sum of the buckets. */
export function sumBuckets(rows: readonly BucketRow[]): Sums {
  const t = Object.fromEntries(FIELDS.map((f) => [f, 0n])) as unknown as Sums;
  for (const r of rows) for (const f of FIELDS) t[f] += r[f];
  return t;
}

function requestsEntry(r: Sums): RequestsEntry {
  return {
    total: Number(r.n_total),
    '2xx': Number(r.n_2xx),
    '4xx': Number(r.n_4xx),
    '5xx': Number(r.n_5xx),
    websocket_success: Number(r.n_ws_ok),
    websocket_error: Number(r.n_ws_err),
    other: Number(r.n_other),
  };
}

function costsEntry(r: Sums): CostsEntry {
  return {
    gpu_cost_cents: ucentsToCents(r.gpu_ucents),
    cpu_cost_cents: ucentsToCents(r.cpu_ucents),
    memory_cost_cents: ucentsToCents(r.mem_ucents),
    total_cost_cents: ucentsToCents(r.gpu_ucents + r.cpu_ucents + r.mem_ucents),
    total_running_time_ms: Number(r.running_time_ms),
    unique_container_count: 0,
  };
}

const utc = (d: Date) => d.toISOString().replace('.000Z', 'Z');

/** Request key: day and month buckets as local midnight with the zone's offset, minute and hour in UTC. */
export function requestKey(bucket: Date, period: Pick<Period, 'interval' | 'tz'>): string {
  if (period.interval === 'minute' || period.interval === 'hour') return utc(bucket);
  return DateTime.fromJSDate(bucket, { zone: period.tz }).toISO({ suppressMilliseconds: true })!;
}

/** Cost key: YYYY-MM-DD (local date of the bucket start) for day and month, UTC RFC 3339 otherwise. */
export function costKey(bucket: Date, period: Pick<Period, 'interval' | 'tz'>): string {
  if (period.interval === 'minute' || period.interval === 'hour') return utc(bucket);
  return DateTime.fromJSDate(bucket, { zone: period.tz }).toISODate()!;
}

/** The response body of section 2.1 from the query's bucket rows (already ascending). */
export function toDashboardMetrics(rows: readonly BucketRow[], period: Period): DashboardMetrics {
  const requests: Record<string, RequestsEntry> = {};
  const costs: Record<string, CostsEntry> = {};
  for (const r of rows) {
    requests[requestKey(r.bucket, period)] = requestsEntry(r);
    costs[costKey(r.bucket, period)] = costsEntry(r);
  }
  const totals = sumBuckets(rows);
  return {
    requests,
    request_totals: requestsEntry(totals),
    costs,
    cost_totals: costsEntry(totals),
    start_date: period.startDate,
    end_date: period.endDate,
    interval: period.interval,
  };
}
