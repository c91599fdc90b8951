import type { Client } from '@temporalio/client';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config/config.js';
import type { SyncRunRecord } from '../db/repositories/runs.js';
import type { NewDelivery, WebhooksRepository } from '../db/repositories/webhooks.js';
import { startDeliveryWorkflow } from './webhook-starter.js';
import { BackgroundWork } from './background-work.js';

const REDRIVE_EVERY_MS = 10_000;
const REDRIVE_AFTER_SECONDS = 15;

/**
 * Deliveries the API starts itself (sync runs, redeliveries). A delivery row is written to
 * PostgreSQL first, then its workflow is started; a start that fails (Temporal down, process
 * killed) is retried by the re-drive loop from the row, so a sync run's webhook is never lost
 * once its row exists, and the caller's response never waits for any of it.
 */
export class WebhookOutbox {
  private readonly work = new BackgroundWork();

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly temporal: Client,
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Runs after the sync caller has its response: persists the run, its response and delivery 0, then starts it. */
  afterSyncRun(run: SyncRunRecord, response: { contentType: string | null; body: Buffer } | null, delivery: NewDelivery): void {
    this.work.track(
      (async () => {
        for (let i = 0; ; i++) {
          try {
            await this.webhooks.recordSyncRunForDelivery(run, response, delivery);
            break;
          } catch (err) {
            if (i >= 4 || this.work.closed) {
              this.log.error({ err, run_id: run.runId }, 'webhook of a sync run not recorded; it will not be delivered');
              return;
            }
            await new Promise((r) => setTimeout(r, 200 * 2 ** i));
          }
        }
        await this.start(run.runId, 0);
      })(),
    );
  }

  /** Starts a recorded delivery now; on failure the re-drive loop tries again later. */
  async start(runId: string, delivery: number): Promise<boolean> {
    try {
      await startDeliveryWorkflow(this.temporal, this.config, runId, delivery);
      await this.webhooks.markWorkflowStarted(runId, delivery);
      return true;
    } catch (err) {
      this.log.warn({ err, run_id: runId, delivery }, 'webhook delivery not started yet; the outbox will retry');
      return false;
    }
  }

  async redrive(olderThanSeconds = REDRIVE_AFTER_SECONDS): Promise<number> {
    let started = 0;
    for (const { runId, delivery } of await this.webhooks.unstarted(olderThanSeconds)) {
      if (this.work.closed) break;
      if (await this.start(runId, delivery)) started++;
    }
    return started;
  }

  startRedriveLoop(everyMs = REDRIVE_EVERY_MS): void {
    this.work.every(everyMs, () => this.redrive(), (err) => this.log.warn({ err }, 'webhook outbox re-drive failed'));
  }

  /** Lets writes and starts already under way finish (shutdown). */
  close(): Promise<void> {
    return this.work.close();
  }
}
