import type { FastifyBaseLogger } from 'fastify';
import type { RunsRepository, SyncRunRecord } from '../db/repositories/runs.js';

const FLUSH_EVERY_MS = 100;
const MAX_BATCH = 1000;
// Bounded so a long database outage cannot exhaust memory; beyond it rows are counted as dropped.
const MAX_BUFFERED = 100_000;

/**
 * Finished synchronous runs are written in batches after the caller has its answer, so listing
 * and inspecting sync runs costs the request path nothing. Retries while PostgreSQL is down.
 */
export class RunLog {
  private buffer: SyncRunRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  dropped = 0;
  written = 0;

  constructor(private readonly runs: RunsRepository, private readonly log: FastifyBaseLogger) {}

  add(row: SyncRunRecord): void {
    if (this.buffer.length >= MAX_BUFFERED) {
      this.dropped++;
      return;
    }
    this.buffer.push(row);
    if (this.buffer.length >= MAX_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
  }

  get buffered(): number {
    return this.buffer.length;
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      // Only what is buffered now (plus any full batch): rows arriving meanwhile wait for their
      // timer, so steady load writes one batch per FLUSH_EVERY_MS, not a small batch after each write.
      let owed = this.buffer.length;
      while (owed > 0 || this.buffer.length >= MAX_BATCH) {
        const batch = this.buffer.slice(0, MAX_BATCH);
        try {
          await this.runs.insertSyncRuns(batch);
          this.buffer.splice(0, batch.length);
          this.written += batch.length;
          owed -= batch.length;
        } catch (err) {
          this.log.warn({ err, buffered: this.buffer.length }, 'run log write failed; retrying');
          this.timer = setTimeout(() => void this.flush(), 1_000);
          return;
        }
      }
    })().finally(() => {
      this.flushing = null;
      // A timer that fired during this write found it busy; the rows it was for still need one.
      if (this.buffer.length) this.timer ??= setTimeout(() => void this.flush(), FLUSH_EVERY_MS);
    });
    return this.flushing;
  }

  /** Flushes everything, retrying for up to `timeoutMs` (shutdown). */
  async close(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffer.length && Date.now() < deadline) {
      await this.flush();
      if (this.buffer.length) await new Promise((r) => setTimeout(r, 200));
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
