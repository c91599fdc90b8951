import type { Pool } from 'pg';
import { withTransaction } from './transaction.js';
import { costOf, type PriceTable } from './metrics/cost.js';
import { insertCostEvents, insertRequestEvents } from './metrics/insert-events.js';
import { runsRepository, type RunOutcome } from './repositories/runs.js';

/**
 * Records an async run's outcome and its request and cost events in one transaction, so an activity
 * retry can neither lose the events nor count them twice: the first outcome wins, with its events.
 */
export async function recordOutcomeWithEvents(pool: Pool, prices: PriceTable, outcome: RunOutcome): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const first = await runsRepository(client as unknown as Pool).finish(outcome);
    if (first) {
      const { rows } = await client.query(
        `SELECT r.app_id, r.async, r.started_at, r.finished_at, r.run_time_ms,
                a.cpu, a.memory_gb, a.compute, a.gpu_count
         FROM runs r LEFT JOIN apps a ON a.app_id = r.app_id WHERE r.run_id = $1`,
        [outcome.runId],
      );
      const r = rows[0];
      const ts: Date = r.finished_at;
      await insertRequestEvents(client, [{ ts, appId: r.app_id, status: outcome.statusCode, async: r.async }], { cacheKey: pool });
      // The app was busy until the answer, the timeout or the cancellation: that is what it cost.
      const runningTimeMs = outcome.runTimeMs && outcome.runTimeMs > 0
        ? outcome.runTimeMs
        : Math.max(0, ts.getTime() - (r.started_at ?? ts).getTime());
      // An app deleted since the run started has no hardware left to price: its time is still recorded.
      const hardware = r.cpu === null ? { cpu: 0, memoryGb: 0, compute: 'CPU', gpuCount: 0 } : { cpu: r.cpu, memoryGb: r.memory_gb, compute: r.compute, gpuCount: r.gpu_count };
      const cost = costOf(hardware, runningTimeMs, prices);
      await insertCostEvents(client, [{ ts, appId: r.app_id, runningTimeMs, gpuUcents: cost.gpuUcents, cpuUcents: cost.cpuUcents, memoryUcents: cost.memoryUcents }], { cacheKey: pool });
    }
    return first;
  });
}
