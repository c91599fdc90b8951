import type { Client } from '@temporalio/client';
import type { FastifyBaseLogger } from 'fastify';
import type { RunsRepository } from '../db/repositories/runs.js';
import { startRunWorkflow, type RunStartSpec } from '../lib/run-start.js';
import { BackgroundWork } from './background-work.js';

/** How old an unstarted row must be before a re-drive starts it (a normal start takes milliseconds). */
const REDRIVE_AFTER_SECONDS = 3;
const REDRIVE_EVERY_MS = 2_000;
const MARK_EVERY_MS = 50;
/** Starts in flight at once; a burst beyond it waits here (it is durable in PostgreSQL anyway). */
const MAX_CONCURRENT_STARTS = 32;

/**
 * Starts the workflows of accepted async runs after their 202 has gone out. Rows are the outbox: a
 * start that fails (Temporal down, this process killed) is retried by the re-drive loop of any API
 * process, and once an hour by the retention workflow, so no accepted run is lost. Confirmed starts
 * are marked in batches, so a run costs one extra UPDATE shared with its neighbours.
 */
export class RunStartOutbox {
  private readonly work = new BackgroundWork();
  /** Runs this process is starting or will start: a re-drive leaves them alone. */
  private readonly pending = new Set<string>();
  private readonly waiting: (() => void)[] = [];
  private active = 0;
  private started: string[] = [];
  private markTimer: NodeJS.Timeout | null = null;
  private redriving: Promise<number> | null = null;

  constructor(
    private readonly runs: RunsRepository,
    private readonly temporal: Client,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Starts one accepted run now, in the background. */
  start(spec: RunStartSpec): void {
    this.work.track(this.startOne(spec));
  }

  private async startOne(spec: RunStartSpec): Promise<boolean> {
    const runId = spec.input.runId;
    if (this.pending.has(runId)) return false;
    this.pending.add(runId);
    if (this.active >= MAX_CONCURRENT_STARTS) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      await startRunWorkflow(this.temporal, spec);
    } catch (err) {
      this.log.warn({ err, run_id: runId }, 'run workflow not started yet; the outbox will retry');
      return false;
    } finally {
      this.active--;
      this.pending.delete(runId);
      this.waiting.shift()?.();
    }
    this.started.push(spec.input.runId);
    this.markTimer ??= setTimeout(() => this.work.track(this.flushMarks()), MARK_EVERY_MS);
    return true;
  }

  private async flushMarks(): Promise<void> {
    this.markTimer = null;
    const ids = this.started;
    this.started = [];
    // Unmarked rows are only re-driven (a harmless, idempotent start), so a failed mark is not retried.
    await this.runs.markWorkflowsStarted(ids).catch((err) => this.log.warn({ err }, 'run starts not marked; they will be re-driven'));
  }

  /** Starts every accepted run whose start is not confirmed; returns how many it started. */
  async redrive(olderThanSeconds = REDRIVE_AFTER_SECONDS): Promise<number> {
    this.redriving ??= (async () => {
      let n = 0;
      try {
        for (const { spec } of await this.runs.unstartedRuns(olderThanSeconds)) {
          if (this.work.closed) break;
          if (await this.startOne(spec)) n++;
        }
        if (n) this.log.info({ started: n }, 're-drove accepted runs whose workflow had not started');
      } finally {
        this.redriving = null;
      }
      return n;
    })();
    return this.redriving;
  }

  startRedriveLoop(everyMs = REDRIVE_EVERY_MS): void {
    this.work.every(everyMs, () => this.redrive(), (err) => this.log.warn({ err }, 'run start re-drive failed'));
  }

  /** Lets starts under way finish and marks them (shutdown). */
  async close(): Promise<void> {
    await this.work.close();
    if (this.markTimer) clearTimeout(this.markTimer);
    await this.flushMarks();
  }
}
