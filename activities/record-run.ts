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
    async recordRunOutcome(outcome: RunOutcome): Promise<void> {
      const first = await deps.runs.finish(outcome);
      if (first && deps.onRunFinished) await deps.onRunFinished(outcome);
    },
  };
}
