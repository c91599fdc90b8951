import { percentile } from './load.js';

/** Median and interquartile range of per-round values (nearest rank), with the values in round order. */
export interface Spread {
  median: number;
  p25: number;
  p75: number;
  perRound: number[];
}

export interface RecordingComparison {
  rounds: number;
  secondsPerCell: number;
  /** Recording on over the mean of the two recording-off APIs, per round (req/s at c=32). */
  onVsOff: Spread;
  /** A/A control: the second recording-off API over the first, per round. */
  aa: Spread;
  /** API plus PostgreSQL CPU µs per request: on minus the mean of the two off APIs, per round. */
  cpuAddedUs: Spread;
  /** The same CPU measure between the two off APIs: what it reads when nothing differs. */
  cpuAaUs: Spread;
  /**
   * True unless onVsOff's median lies below aa's interquartile range: recording does not make /run
   * slower by more than two identical API processes differ from each other here.
   */
  notMeasurablySlower: boolean;
  cells: Record<Target, CellReading>[];
}

export type Target = 'on' | 'off' | 'control';

/** What one cell of a round reads: req/s, and API plus PostgreSQL CPU µs per request. */
export interface CellReading {
  rps: number;
  cpuUsPerRequest: number;
}

function spread(values: number[], digits: number): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 10 ** digits) / 10 ** digits;
  return { median: r(percentile(sorted, 50)), p25: r(percentile(sorted, 25)), p75: r(percentile(sorted, 75)), perRound: values.map(r) };
}

/**
 * Recording on vs off at saturation, as an A/B test with an A/A control. Each round measures three
 * APIs (recording on, off, and a second off process) in an order rotated every round, so drift
 * of the shared machine falls on each equally. Two separate off processes also show how much
 * identical API processes differ from each other, which two long cells a minute apart cannot.
 */
export async function compareRecording(
  rounds: number,
  secondsPerCell: number,
  measure: (target: Target, seconds: number) => Promise<CellReading>,
): Promise<RecordingComparison> {
  const cells: RecordingComparison['cells'] = [];
  for (let i = 0; i < rounds; i++) {
    const order = (['on', 'off', 'control'] as const).map((_, k, all) => all[(k + i) % 3]);
    const round: Partial<Record<Target, CellReading>> = {};
    for (const t of order) round[t] = await measure(t, secondsPerCell);
    cells.push(round as Record<Target, CellReading>);
  }
  const onVsOff = spread(cells.map((c) => c.on.rps / ((c.off.rps + c.control.rps) / 2)), 3);
  const aa = spread(cells.map((c) => c.control.rps / c.off.rps), 3);
  return {
    rounds,
    secondsPerCell,
    onVsOff,
    aa,
    cpuAddedUs: spread(cells.map((c) => c.on.cpuUsPerRequest - (c.off.cpuUsPerRequest + c.control.cpuUsPerRequest) / 2), 1),
    cpuAaUs: spread(cells.map((c) => c.control.cpuUsPerRequest - c.off.cpuUsPerRequest), 1),
    notMeasurablySlower: onVsOff.median >= aa.p25,
    cells,
  };
}
