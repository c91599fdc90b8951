/** One request that reached an existing app on the run path. */
export interface RequestEvent {
  ts: Date;
  appId: string;
  /** HTTP status (for async runs: the status of the internal synchronous call); null when there was none. */
  status: number | null;
  /** WebSocket close code when the request was a WebSocket; it classifies the request instead of `status`. */
  wsCloseCode?: number | null;
  async: boolean;
}

/** What one run cost. Money is integer micro-cents (1 cent = 1,000,000 micro-cents). */
export interface CostEvent {
  ts: Date;
  appId: string;
  runningTimeMs: number;
  gpuUcents: bigint;
  cpuUcents: bigint;
  memoryUcents: bigint;
}

export const UCENTS_PER_CENT = 1_000_000n;
