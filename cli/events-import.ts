import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import readline from 'node:readline';
import type { Command } from 'commander';
import type { Pool } from 'pg';
import type { CostEvent, RequestEvent } from '../db/metrics/event-types.js';
import { insertCostEvents, insertRequestEvents, refreshRollups } from '../db/metrics/insert-events.js';
import { withTransaction } from '../db/transaction.js';
import { parseRfc3339 } from '../db/metrics/period.js';

// `events import <file.ndjson>`: bulk-load request and cost events (backfills, tests, the benchmark).
// Every line is validated before anything is written; one bad line rejects the whole file.

export class EventsImportError extends Error {}

const MAX_REPORTED = 50;
const BATCH = 10_000;
/** Cents accepted per event: keeps micro-cents far inside exact double and bigint arithmetic. */
const MAX_CENTS = 1e9;

const REQUEST_FIELDS = new Set(['type', 'app_id', 'ts', 'status', 'websocket_close_code', 'async']);
const COST_FIELDS = new Set(['type', 'app_id', 'ts', 'running_time_ms', 'cpu_cost_cents', 'memory_cost_cents', 'gpu_cost_cents']);

type Parsed = { kind: 'request'; event: RequestEvent } | { kind: 'cost'; event: CostEvent };

function cents(o: Record<string, unknown>, name: string): bigint {
  const v = o[name];
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_CENTS) {
    throw new Error(`${name}: must be a number of cents between 0 and ${MAX_CENTS}`);
  }
  return BigInt(Math.round(v * 1e6));
}

function integer(o: Record<string, unknown>, name: string, min: number, max: number): number {
  const v = o[name];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new Error(`${name}: must be an integer from ${min} to ${max}`);
  return v;
}

/** Parses one line; throws with a message naming the field and the rule. */
export function parseEventLine(line: string): Parsed {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch (err) {
    throw new Error(`not valid JSON (${(err as Error).message})`);
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error('must be a JSON object');
  const rec = o as Record<string, unknown>;
  if (rec.type !== 'request' && rec.type !== 'cost') throw new Error('type: must be "request" or "cost"');
  const allowed = rec.type === 'request' ? REQUEST_FIELDS : COST_FIELDS;
  const unknown = Object.keys(rec).filter((k) => !allowed.has(k));
  if (unknown.length) throw new Error(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')} for type ${rec.type}`);
  if (typeof rec.app_id !== 'string' || rec.app_id.length === 0 || rec.app_id.length > 200 || rec.app_id.includes('\u0000')) {
    throw new Error('app_id: must be a non-empty string of at most 200 characters');
  }
  if (typeof rec.ts !== 'string') throw new Error('ts: must be an RFC 3339 timestamp string');
  const ts = parseRfc3339(rec.ts);
  if (!ts) throw new Error(`ts: must be an RFC 3339 timestamp with an offset, such as 2026-03-08T12:00:00Z`);
  if (rec.type === 'request') {
    const status = rec.status === undefined || rec.status === null ? null : integer(rec, 'status', 100, 599);
    const ws = rec.websocket_close_code === undefined || rec.websocket_close_code === null ? null : integer(rec, 'websocket_close_code', 1000, 4999);
    if (rec.async !== undefined && typeof rec.async !== 'boolean') throw new Error('async: must be true or false');
    return { kind: 'request', event: { ts, appId: rec.app_id, status, wsCloseCode: ws, async: rec.async === true } };
  }
  for (const f of ['running_time_ms', 'cpu_cost_cents', 'memory_cost_cents', 'gpu_cost_cents']) {
    if (rec[f] === undefined) throw new Error(`${f}: required for type cost`);
  }
  return {
    kind: 'cost',
    event: {
      ts,
      appId: rec.app_id,
      runningTimeMs: integer(rec, 'running_time_ms', 0, Number.MAX_SAFE_INTEGER),
      cpuUcents: cents(rec, 'cpu_cost_cents'),
      memoryUcents: cents(rec, 'memory_cost_cents'),
      gpuUcents: cents(rec, 'gpu_cost_cents'),
    },
  };
}

async function* lines(filePath: string): AsyncGenerator<{ n: number; text: string }> {
  const rl = readline.createInterface({ input: createReadStream(filePath, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const text of rl) {
    n++;
    // Blank lines (a trailing newline, separators) carry no event.
    if (text.trim() !== '') yield { n, text };
  }
}

/**
 * Validates the whole file (first pass), then loads it in one transaction (second pass, batches of
 * 10k through unnest). On TimescaleDB the continuous aggregates are refreshed over the loaded span
 * afterwards, since backfilled rows below their watermark are otherwise not visible.
 */
export async function importEventsFile(pool: Pool, filePath: string, opts: { batchRows?: number } = {}): Promise<{ loaded: number; requests: number; costs: number }> {
  try {
    await access(filePath);
  } catch {
    throw new EventsImportError(`cannot read ${filePath}`);
  }
  const problems: string[] = [];
  let bad = 0;
  for await (const { n, text } of lines(filePath)) {
    try {
      parseEventLine(text);
    } catch (err) {
      bad++;
      if (problems.length < MAX_REPORTED) problems.push(`line ${n}: ${(err as Error).message}`);
    }
  }
  if (bad) {
    const more = bad > problems.length ? `\n… and ${bad - problems.length} more bad lines` : '';
    throw new EventsImportError(`${filePath}: ${bad} bad line${bad > 1 ? 's' : ''}, nothing loaded:\n${problems.join('\n')}${more}`);
  }

  let requests = 0;
  let costs = 0;
  let min = Infinity;
  let max = -Infinity;
  await withTransaction(pool, async (client) => {
    let req: RequestEvent[] = [];
    let cost: CostEvent[] = [];
    const flush = async () => {
      requests += await insertRequestEvents(client, req, { cacheKey: pool, batchRows: opts.batchRows });
      costs += await insertCostEvents(client, cost, { cacheKey: pool, batchRows: opts.batchRows });
      req = [];
      cost = [];
    };
    for await (const { text } of lines(filePath)) {
      const p = parseEventLine(text);
      const t = p.event.ts.getTime();
      if (t < min) min = t;
      if (t > max) max = t;
      if (p.kind === 'request') req.push(p.event);
      else cost.push(p.event);
      if (req.length + cost.length >= BATCH) await flush();
    }
    await flush();
  });
  if (requests + costs > 0) await refreshRollups(pool, new Date(min), new Date(max));
  return { loaded: requests + costs, requests, costs };
}

/** Adds `events import <file.ndjson>` to the operator CLI. */
export function registerEventsCommands(program: Command, getPool: () => Pool, out: (line: string) => void = (l) => console.log(l)): void {
  const events = program.command('events').description('dashboard metrics events');
  events
    .command('import')
    .argument('<file.ndjson>', 'one JSON event per line: {"type":"request",…} or {"type":"cost",…}')
    .description('bulk-load request and cost events; a file with any bad line loads nothing')
    .action(async (file: string) => {
      const r = await importEventsFile(getPool(), file);
      out(`loaded ${r.loaded} events (${r.requests} requests, ${r.costs} costs)`);
    });
}
