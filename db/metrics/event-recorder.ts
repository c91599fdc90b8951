import type { Pool } from 'pg';
import type { CostEvent, RequestEvent } from './event-types.js';
import { insertCostEvents, insertRequestEvents } from './insert-events.js';

export interface EventRecorderOptions {
  /** Events held in memory at most (queued plus being written); beyond it new events are dropped and counted. */
  maxBuffered?: number;
  /** A write starts at least this often while events wait. */
  flushIntervalMs?: number;
  /** A write starts at once when this many events wait; also the largest batch per statement. */
  batchSize?: number;
  /** Backoff after a failed write, doubling up to maxRetryDelayMs. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  onError?: (err: Error) => void;
  /** Told about each event refused at record time (see `rejected`). */
  onRejected?: (reason: string) => void;
}

export interface RecorderStats {
  buffered: number;
  dropped: number;
  written: number;
  /** Events refused at record time because PostgreSQL could never store them (bad time or number). */
  rejected: number;
}

const isInt = (v: unknown) => Number.isSafeInteger(v);
const isTime = (d: unknown) => d instanceof Date && Number.isFinite(d.getTime());

/** Why PostgreSQL would refuse this request event, or null: one bad row would fail its whole batch on every retry. */
function requestProblem(e: RequestEvent): string | null {
  if (!isTime(e.ts)) return 'request event without a valid time';
  if (typeof e.appId !== 'string' || e.appId === '') return 'request event without an app id';
  if (e.status !== null && !isInt(e.status)) return `request event with status ${String(e.status)}`;
  if (e.wsCloseCode != null && !isInt(e.wsCloseCode)) return `request event with close code ${String(e.wsCloseCode)}`;
  return null;
}

function costProblem(e: CostEvent): string | null {
  if (!isTime(e.ts)) return 'cost event without a valid time';
  if (typeof e.appId !== 'string' || e.appId === '') return 'cost event without an app id';
  if (!Number.isFinite(e.runningTimeMs)) return `cost event with running time ${String(e.runningTimeMs)}`;
  if (typeof e.gpuUcents !== 'bigint' || typeof e.cpuUcents !== 'bigint' || typeof e.memoryUcents !== 'bigint') return 'cost event with non-integer money';
  return null;
}

/**
 * Records request and cost events off the hot path: `record*` only appends to memory; a timer writes
 * batches with one unnest statement each and keeps retrying (with backoff) while PostgreSQL is down.
 * Nothing is lost unless the in-memory bound is exceeded, and that is counted in `dropped`.
 */
export class EventRecorder {
  private requests: RequestEvent[] = [];
  private costs: CostEvent[] = [];
  private inFlight = 0;
  private dropped = 0;
  private written = 0;
  private rejected = 0;
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private timer: NodeJS.Timeout | null = null;
  private retryAt = 0;
  private delay: number;
  private closed = false;
  private readonly o: Required<Omit<EventRecorderOptions, 'onError' | 'onRejected'>> & Pick<EventRecorderOptions, 'onError' | 'onRejected'>;

  constructor(private readonly pool: Pool, options: EventRecorderOptions = {}) {
    this.o = {
      maxBuffered: options.maxBuffered ?? 200_000,
      flushIntervalMs: options.flushIntervalMs ?? 500,
      batchSize: options.batchSize ?? 5_000,
      retryDelayMs: options.retryDelayMs ?? 250,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 5_000,
      onError: options.onError,
      onRejected: options.onRejected,
    };
    this.delay = this.o.retryDelayMs;
    this.timer = setInterval(() => this.tick(), this.o.flushIntervalMs);
    // Recording must never keep a process alive on its own; close() flushes at shutdown.
    this.timer.unref();
  }

  recordRequest(e: RequestEvent): void {
    const problem = requestProblem(e);
    if (problem) return this.reject(problem);
    if (!this.admit()) return;
    this.requests.push(e);
    this.kickWhenFull();
  }

  recordCost(e: CostEvent): void {
    const problem = costProblem(e);
    if (problem) return this.reject(problem);
    if (!this.admit()) return;
    this.costs.push(e);
    this.kickWhenFull();
  }

  stats(): RecorderStats {
    return { buffered: this.requests.length + this.costs.length + this.inFlight, dropped: this.dropped, written: this.written, rejected: this.rejected };
  }

  private reject(reason: string): void {
    this.rejected++;
    this.o.onRejected?.(reason);
  }

  private admit(): boolean {
    if (this.closed || this.stats().buffered >= this.o.maxBuffered) {
      this.dropped++;
      return false;
    }
    return true;
  }

  private kickWhenFull(): void {
    if (this.requests.length + this.costs.length >= this.o.batchSize && this.pending === 0 && Date.now() >= this.retryAt) {
      queueMicrotask(() => this.tick());
    }
  }

  private tick(): void {
    if (this.pending > 0 || Date.now() < this.retryAt || this.requests.length + this.costs.length === 0) return;
    this.flush().catch(() => {});
  }

  /** Writes everything buffered now; rejects when a write fails (the events stay buffered for the retry loop). */
  flush(): Promise<void> {
    // Writes are serialised: one statement at a time keeps event order and the in-flight count simple.
    this.pending++;
    const run = this.chain.then(async () => {
      // What is buffered when this write starts, plus any full batch: events arriving meanwhile wait
      // for the next tick. Draining until empty instead turned steady load into a statement every
      // few milliseconds of a handful of rows each (157 statements/s at 2,700 runs/s).
      let owed = this.requests.length + this.costs.length;
      while (owed > 0 || this.requests.length + this.costs.length >= this.o.batchSize) owed -= await this.writeOneBatch();
    });
    const done = run.finally(() => this.pending--);
    this.chain = done.catch(() => {});
    return done;
  }

  /** Writes up to one batch, oldest first; returns how many events it wrote. */
  private async writeOneBatch(): Promise<number> {
    const req = this.requests.splice(0, this.o.batchSize);
    const cost = this.costs.splice(0, Math.max(0, this.o.batchSize - req.length));
    this.inFlight = req.length + cost.length;
    let reqDone = false;
    try {
      await insertRequestEvents(this.pool, req);
      reqDone = true;
      await insertCostEvents(this.pool, cost);
      this.written += req.length + cost.length;
      this.delay = this.o.retryDelayMs;
      this.retryAt = 0;
      return req.length + cost.length;
    } catch (err) {
      // Each insert is one atomic statement: put back exactly what was not written, in order.
      if (!reqDone) this.requests = req.concat(this.requests);
      else this.written += req.length;
      this.costs = cost.concat(this.costs);
      this.retryAt = Date.now() + this.delay;
      this.delay = Math.min(this.delay * 2, this.o.maxRetryDelayMs);
      this.o.onError?.(err as Error);
      throw err;
    } finally {
      this.inFlight = 0;
    }
  }

  /**
   * Stops accepting events and writes all that are buffered, retrying while PostgreSQL is down,
   * for at most `timeoutMs`; after that it rejects, saying how many events were not written.
   */
  async close(timeoutMs = 30_000): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.flush();
        return;
      } catch (err) {
        if (Date.now() >= deadline) {
          throw new Error(`event recorder closed with ${this.stats().buffered} events not written: ${(err as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, Math.max(0, Math.min(this.retryAt - Date.now(), deadline - Date.now()))));
      }
    }
  }
}
