import type { RunOutcome, RunsRepository } from '../db/repositories/runs.js';

export interface RecordRunDeps {
  runs: RunsRepository;
  /** Called once per run when its outcome is first recorded (metrics events). */
  onRunFinished?: (outcome: RunOutcome) => Promise<void>;
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
    async recordRunOutcome(outcome: RunOutcome): Promise<void> {
      const first = await deps.runs.finish(outcome);
      if (first && deps.onRunFinished) await deps.onRunFinished(outcome);
    },
  };
}
