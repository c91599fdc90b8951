import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Pool } from 'pg';
import type { RunOutcome, RunsRepository } from '../db/repositories/runs.js';
import type { PriceTable } from '../db/metrics/cost.js';
import { recordOutcomeWithEvents } from '../db/run-outcome-store.js';
import { startRunWorkflow } from '../lib/run-start.js';

export interface RecordRunDeps {
  runs: RunsRepository;
  pool: Pool;
  prices: PriceTable;
}

export function makeRecordRunActivities(deps: RecordRunDeps) {
  return {
    async recordRunStarted(runId: string): Promise<void> {
      await deps.runs.markRunning(runId);
    },
    /** Prunes in batches so one huge backlog never holds a long transaction. */
    async pruneRunPayloads(retentionSeconds: number): Promise<number> {
      let total = 0;
      for (;;) {
        const n = await deps.runs.pruneExpiredPayloads(retentionSeconds);
        total += n;
        if (n < 5000) return total;
      }
    },
    /**
     * The backstop of the run start outbox, for when no API process re-drives: accepted runs whose
     * workflow never started are started now. Rows from before the outbox (no start spec) whose
     * workflow never started were never answered with a 202; they are closed as failures.
     */
    async failOrphanedRuns(olderThanSeconds: number): Promise<number> {
      const client = Context.current().client;
      for (const { runId, spec } of await deps.runs.unstartedRuns(olderThanSeconds)) {
        await startRunWorkflow(client, spec);
        await deps.runs.markWorkflowsStarted([runId]);
      }
      let closed = 0;
      for (const runId of await deps.runs.staleQueuedRunIds(olderThanSeconds)) {
        try {
          await client.workflow.getHandle(runId).describe();
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          const done = await deps.runs.finish({ runId, status: 'failure', statusCode: null, runTimeMs: null, error: 'run was never started (not accepted)' });
          if (done) closed++;
        }
      }
      return closed;
    },
    async recordRunOutcome(outcome: RunOutcome): Promise<void> {
      await recordOutcomeWithEvents(deps.pool, deps.prices, outcome);
    },
  };
}
