import type { App } from '../db/repositories/apps.js';
import { costOf, type PriceTable } from '../db/metrics/cost.js';
import type { EventRecorder } from '../db/metrics/event-recorder.js';

/** What the dashboard learns from one request on the run path: its request event and its cost. */
export function createRunEvents(recorder: EventRecorder, prices: PriceTable, enabled = true) {
  return {
    recorder,
    recordRun(app: App, e: { ts: Date; status: number | null; wsCloseCode?: number | null; async: boolean; runTimeMs: number }): void {
      if (!enabled) return;
      recorder.recordRequest({ ts: e.ts, appId: app.appId, status: e.status, wsCloseCode: e.wsCloseCode ?? null, async: e.async });
      const cost = costOf(app, e.runTimeMs, prices);
      recorder.recordCost({ ts: e.ts, appId: app.appId, runningTimeMs: e.runTimeMs, gpuUcents: cost.gpuUcents, cpuUcents: cost.cpuUcents, memoryUcents: cost.memoryUcents });
    },
  };
}

export type RunEvents = ReturnType<typeof createRunEvents>;
